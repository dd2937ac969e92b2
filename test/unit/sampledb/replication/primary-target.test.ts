// Everything that must reach the writable database follows the elected primary (status.replication.primary), not
// pod 0: each Job builder's host, and the Ready condition. Pure builders, no API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1Pod, V1Secret, V1StatefulSet } from '@kubernetes/client-node';
import type { SampleDbObject } from '../../../../src/api/index.ts';
import { backupJob } from '../../../../src/sampledb/backup-job.ts';
import { initJob } from '../../../../src/sampledb/init-job.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import { migrationsJob } from '../../../../src/sampledb/migrations/job.ts';
import { monitoringRoleJob } from '../../../../src/sampledb/monitoring-role-job.ts';
import { ownerPasswordJob } from '../../../../src/sampledb/owner-password.ts';
import { replicated } from '../../../../src/sampledb/replication/objects.ts';
import { replicationRolesJob } from '../../../../src/sampledb/replication/roles-job.ts';
import { inPlaceRestoreJob } from '../../../../src/sampledb/restore/objects.ts';
import { sampleDbStatus } from '../../../../src/sampledb/status.ts';
import { versionJob } from '../../../../src/sampledb/version-job.ts';
import { sampleDb } from '../../../support/sampledb.ts';

const withPrimary = (primary: string | undefined, instances = 3): SampleDbObject => ({
  ...sampleDb({ version: '15', instances }),
  ...(primary ? { status: { replication: { primary, term: 4, instances: [] } } } : {}),
});
const elected = resolveInstance(withPrimary('orders-2'));

/** Every host a Job's containers are given that is a database pod's headless name. */
function podHosts(job: V1Job): string[] {
  const spec = job.spec?.template.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]
    .flatMap((c) => c.env ?? [])
    .map((e) => e.value ?? '')
    .filter((v) => /^orders-\d+\.orders-headless\.shop\.svc$/.test(v));
}

const backup = {
  apiVersion: 'sampledb.io/v1alpha1' as const,
  kind: 'SampleDBBackup' as const,
  metadata: { name: 'nightly', namespace: 'shop', uid: 'backup-uid' },
  spec: { sampleDB: { name: 'orders' } },
  status: { checksum: 'a'.repeat(64) },
};
const restore = {
  apiVersion: 'sampledb.io/v1alpha1' as const,
  kind: 'SampleDBRestore' as const,
  metadata: { name: 'back', namespace: 'shop', uid: 'restore-uid' },
  spec: { sampleDB: { name: 'orders' }, backup: { name: 'nightly' } },
};

const BUILDERS: Record<string, (instance: typeof elected) => V1Job> = {
  init: (i) => initJob(i),
  backup: (i) => backupJob(i, backup),
  version: (i) => versionJob(i, 'docker.io/library/postgres:15'),
  migrations: (i) => migrationsJob(i, 'docker.io/library/postgres:15', [{ name: 'm1', checksum: 'c' }]),
  'owner password': (i) => ownerPasswordJob(i, 'fingerprint'),
  'monitoring role': (i) => monitoringRoleJob(i, 'secret-uid'),
  'replication roles': (i) => replicationRolesJob(i, ['u1', 'u2']),
  'in-place restore': (i) => inPlaceRestoreJob(i, restore, backup, 'restore'),
};

describe('the Jobs reach the elected primary', () => {
  for (const [what, build] of Object.entries(BUILDERS)) {
    it(`${what} Job: the recorded primary, pod 0 before any election`, () => {
      const hosts = podHosts(build(elected));
      assert.ok(hosts.length > 0, 'the Job is given a database host');
      assert.deepEqual(new Set(hosts), new Set(['orders-2.orders-headless.shop.svc']));
      assert.deepEqual(
        new Set(podHosts(build(resolveInstance(withPrimary(undefined))))),
        new Set(['orders-0.orders-headless.shop.svc']),
      );
    });
  }

  it('a record naming another StatefulSet pod is not followed', () => {
    assert.equal(resolveInstance(withPrimary('other-1')).primary.pod, 'orders-0');
    assert.deepEqual(elected.primary, { pod: 'orders-2', dataPvc: 'data-orders-2' });
  });
});

describe('Ready follows the elected primary', () => {
  const b64 = (v: string) => Buffer.from(v).toString('base64');
  const credentials: V1Secret = { data: { username: b64('app'), password: b64('pw') } };
  // Two of three pods Ready: the StatefulSet counts them, but only the primary's own readiness makes Ready.
  const sts: V1StatefulSet = {
    metadata: { name: 'orders', generation: 1 },
    spec: { replicas: 3, selector: {}, serviceName: 'orders-headless', template: {} },
    status: {
      replicas: 3,
      readyReplicas: 2,
      updatedReplicas: 3,
      observedGeneration: 1,
      currentRevision: 'r',
      updateRevision: 'r',
    },
  };
  const pod = (ready: boolean): V1Pod => ({
    metadata: { name: 'orders-2' },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  });
  const status = (primaryReady: boolean) =>
    sampleDbStatus(
      elected,
      {
        statefulSet: sts,
        pod: pod(primaryReady),
        dataPvc: { status: { phase: 'Bound' } },
        credentialsSecret: credentials,
        initJob: { metadata: { name: 'orders-init' }, status: { succeeded: 1 } },
        bindingSecret: { metadata: { name: 'orders-binding' } },
      },
      new Date('2026-01-01T00:00:00Z'),
    );

  it('is Ready when the primary pod is Ready', () => {
    const ready = status(true);
    assert.equal(ready.phase, 'Ready');
    assert.match(ready.conditions?.find((c) => c.type === 'Provisioned')?.message ?? '', /orders-2/);
  });

  it('is not Ready when only replicas are', () => {
    const notReady = status(false);
    assert.notEqual(notReady.phase, 'Ready');
    assert.equal(notReady.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    assert.match(notReady.conditions?.find((c) => c.type === 'Provisioned')?.message ?? '', /orders-2/);
  });
});

describe('replicated', () => {
  it('stays on for one instance once a primary was elected (a scale down to 1 keeps the election)', () => {
    assert.equal(replicated(resolveInstance(withPrimary(undefined, 1))), false);
    assert.equal(replicated(resolveInstance(withPrimary(undefined, 2))), true);
    assert.equal(replicated(resolveInstance(withPrimary('orders-1', 1))), true);
  });
});
