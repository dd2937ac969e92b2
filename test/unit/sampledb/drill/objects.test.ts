// fill-disk's Jobs as built from the drill and the target the cache shows: the primary's data claim on its node,
// restricted, bounded in time, Ready only while the volume is full, and with no database credential; the probe of
// a fill-disk run first waits for a refused write. isolate-primary's objects: the enforcement check's Job and its
// deny-all egress policy select each other by one label, and the isolation selects only the primary's pod.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbDrillObject } from '../../../../src/api/index.ts';
import {
  drillJob,
  fillDiskJob,
  isolationPolicy,
  netcheckJob,
  netcheckPolicy,
} from '../../../../src/sampledb/drill/objects.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import { DRILL_FILL_SCRIPT, DRILL_RELEASE_SCRIPT } from '../../../../src/sampledb/scripts/drill-fill.ts';
import { DRILL_NETCHECK_SCRIPT } from '../../../../src/sampledb/scripts/drill-netcheck.ts';
import { restrictedPodSpecViolations } from '../../../support/restricted-pod-spec.ts';
import { sampleDb } from '../../../support/sampledb.ts';

const instance = resolveInstance(sampleDb({ instances: 2 }));
const drill: SampleDbDrillObject = {
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDBDrill',
  metadata: { name: 'full', namespace: 'shop', uid: 'd-1' },
  spec: { sampleDB: { name: 'orders' }, kind: 'fill-disk' },
};
const target = { pod: 'orders-1', node: 'node-a', claimBytes: 10 * 2 ** 30 };
const env = (job: ReturnType<typeof fillDiskJob>) =>
  Object.fromEntries((job.spec?.template.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));

describe('fill-disk Jobs', () => {
  it('mount the target pod’s data claim on its node, restricted and bounded', () => {
    for (const which of ['fill', 'release'] as const) {
      const job = fillDiskJob(instance, drill, 3, which, target);
      const pod = job.spec?.template.spec;
      assert.ok(pod);
      assert.equal(job.metadata?.name, `full-r3-${which}`);
      assert.deepEqual(restrictedPodSpecViolations(pod, { readOnlyRootFilesystem: true }), []);
      assert.deepEqual(
        pod.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim,
        { claimName: 'data-orders-1' },
        'the primary orders-1’s claim, not pod 0’s',
      );
      assert.deepEqual(
        pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
        [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] }],
      );
      assert.equal(job.spec?.backoffLimit, 0);
      assert.ok((job.spec?.activeDeadlineSeconds ?? 0) > 0, 'a deadline: its TERM removes the ballast');
      assert.equal(job.metadata?.ownerReferences?.[0]?.uid, 'd-1');
      const container = pod.containers[0];
      assert.equal(container?.command?.[2], which === 'fill' ? DRILL_FILL_SCRIPT : DRILL_RELEASE_SCRIPT);
      assert.ok(
        !(container?.env ?? []).some((e) => e.valueFrom?.secretKeyRef),
        'no database credential: the Jobs only touch files',
      );
    }
  });

  it('the fill Job is Ready while the volume is full; its size bound is twice the claim plus 512 MiB', () => {
    const job = fillDiskJob(instance, drill, 1, 'fill', target);
    const container = job.spec?.template.spec?.containers[0];
    assert.deepEqual(container?.readinessProbe?.exec?.command, ['test', '-e', '/tmp/sampledb-filled']);
    assert.equal(env(job).SAMPLEDB_FILL_LIMIT_KIB, String((2 * 10 * 2 ** 30 + 512 * 2 ** 20) / 1024));
    assert.equal(env(job).SAMPLEDB_FILL_DATA_DIR, 'pgdata');
    assert.equal(
      fillDiskJob(instance, drill, 1, 'release', target).spec?.template.spec?.containers[0]?.readinessProbe,
      undefined,
    );
  });

  it('without a known node the claim’s own node affinity places it', () => {
    const job = fillDiskJob(instance, drill, 1, 'fill', { pod: 'orders-0', claimBytes: 2 ** 30 });
    assert.equal(job.spec?.template.spec?.affinity, undefined);
  });

  it('the probe of a fill-disk run first waits for a refused write; other drills’ do not', () => {
    const probeEnv = (d: SampleDbDrillObject) =>
      Object.fromEntries(
        (drillJob(instance, d, 1, 'probe').spec?.template.spec?.containers[0]?.env ?? []).map((e) => [
          e.name,
          e.value,
        ]),
      );
    assert.equal(probeEnv(drill).SAMPLEDB_PROBE_FILL_SECONDS, '60');
    assert.equal(
      probeEnv({ ...drill, spec: { ...drill.spec, kind: 'kill-primary' } }).SAMPLEDB_PROBE_FILL_SECONDS,
      '0',
    );
  });
});

describe('isolate-primary objects', () => {
  const isolate: SampleDbDrillObject = { ...drill, spec: { ...drill.spec, kind: 'isolate-primary' } };

  it('the enforcement check’s pod is the one its deny-all egress policy selects, and holds no credential', () => {
    const job = netcheckJob(instance, isolate, 2, '10.0.0.7');
    const policy = netcheckPolicy(instance, isolate, 2);
    const pod = job.spec?.template;
    assert.ok(pod?.spec);
    assert.deepEqual(restrictedPodSpecViolations(pod.spec, { readOnlyRootFilesystem: true }), []);
    const selector = policy.spec?.podSelector?.matchLabels ?? {};
    assert.ok(Object.keys(selector).length > 0, 'a selector that is not the whole namespace');
    for (const [k, v] of Object.entries(selector)) assert.equal(pod.metadata?.labels?.[k], v, k);
    assert.deepEqual(policy.spec?.policyTypes, ['Egress']);
    assert.equal(policy.spec?.egress, undefined, 'no egress rule: nothing is allowed');
    const container = pod.spec.containers[0];
    assert.equal(container?.command?.[2], DRILL_NETCHECK_SCRIPT);
    const vars = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(vars.SAMPLEDB_NETCHECK_HOST, '10.0.0.7', 'the pod IP: a DNS lookup would be egress too');
    assert.equal(vars.SAMPLEDB_NETCHECK_PORT, '5432');
    assert.ok(!(container?.env ?? []).some((e) => e.valueFrom), 'no credential: pg_isready opens no session');
    assert.equal(job.spec?.backoffLimit, 0);
    assert.ok((job.spec?.activeDeadlineSeconds ?? 0) > 0);
    for (const o of [job, policy]) assert.equal(o.metadata?.ownerReferences?.[0]?.uid, 'd-1');
  });

  it('the isolation selects the primary’s pod by name within this database, in and out', () => {
    const policy = isolationPolicy(instance, isolate, 2, 'orders-1');
    assert.equal(policy.metadata?.namespace, 'shop');
    assert.equal(policy.metadata?.ownerReferences?.[0]?.uid, 'd-1', 'deleting the drill lifts the isolation');
    const selector = policy.spec?.podSelector?.matchLabels ?? {};
    assert.equal(selector['statefulset.kubernetes.io/pod-name'], 'orders-1');
    for (const [k, v] of Object.entries(instance.labels.database)) assert.equal(selector[k], v, k);
    assert.deepEqual(policy.spec?.policyTypes, ['Ingress', 'Egress']);
    assert.equal(policy.spec?.ingress, undefined);
    assert.equal(policy.spec?.egress, undefined);
    assert.notEqual(policy.metadata?.name, netcheckPolicy(instance, isolate, 2).metadata?.name);
  });
});
