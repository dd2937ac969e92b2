// fill-disk's Jobs as built from the drill and the target the cache shows: the primary's data claim on its node,
// restricted, bounded in time, Ready only while the volume is full, and with no database credential; the probe of
// a fill-disk run first waits for a refused write.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbDrillObject } from '../../../../src/api/index.ts';
import { drillJob, fillDiskJob } from '../../../../src/sampledb/drill/objects.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import { DRILL_FILL_SCRIPT, DRILL_RELEASE_SCRIPT } from '../../../../src/sampledb/scripts/drill-fill.ts';
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
