import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject } from '../../../../src/api/index.ts';
import { silentLogger } from '../../../../src/runtime/index.ts';
import { SampleDbBackupReconciler } from '../../../../src/sampledb/backup/reconciler.ts';
import { decideSpace } from '../../../../src/sampledb/backup/space.ts';
import { PVCS, SAMPLEDB_BACKUPS, STORAGE_CLASSES } from '../../../../src/sampledb/resources.ts';
import { sampleDbBackup } from '../../../support/sampledb.ts';
import { FakeApiserver } from '../support/fake-apiserver.ts';
import { servingDatabase } from '../support/serving.ts';

const MI = 2 ** 20;
const done = (name: string, sizeBytes: number, at: string, of = 'orders'): SampleDbBackupObject =>
  sampleDbBackup(name, of, {
    phase: 'Completed',
    completedAt: at,
    sizeBytes,
    location: `pvc://orders-backups/${of}/${name}.dump`,
  });
const pvc = (capacity: string, requested = capacity) => ({
  metadata: { name: 'orders-backups' },
  spec: { storageClassName: 'standard', resources: { requests: { storage: requested } } },
  status: { capacity: { storage: capacity } },
});

describe('decideSpace', () => {
  const base = {
    dbName: 'orders',
    claimName: 'orders-backups',
    operatorOwned: true,
    storageClass: undefined,
  };
  // 1 GiB volume, 600 MiB of dumps on it, the last one 300 MiB: the next needs 360 MiB, 424 MiB are free.
  const backups = [
    done('b1', 300 * MI, '2026-01-01T00:00:00Z'),
    done('b2', 300 * MI, '2026-01-02T00:00:00Z'),
  ];

  it('lets a backup start when the last dump plus its margin fits, or when nothing is known yet', () => {
    assert.deepEqual(decideSpace({ ...base, pvc: pvc('1Gi'), backups }), { kind: 'enough' });
    assert.deepEqual(decideSpace({ ...base, pvc: pvc('1Gi'), backups: [] }), { kind: 'enough' });
    assert.deepEqual(decideSpace({ ...base, pvc: undefined, backups }), { kind: 'enough' });
  });

  it("grows the operator's PVC with an expandable class; otherwise says how much is needed", () => {
    const full = [...backups, done('b3', 300 * MI, '2026-01-03T00:00:00Z')];
    const expandable = { allowVolumeExpansion: true, metadata: { name: 'standard' }, provisioner: 'x' };
    assert.deepEqual(decideSpace({ ...base, pvc: pvc('1Gi'), backups: full, storageClass: expandable }), {
      kind: 'grow',
      to: '2Gi',
      neededBytes: 360 * MI,
      freeBytes: 124 * MI,
    });
    assert.equal(decideSpace({ ...base, pvc: pvc('1Gi', '2Gi'), backups: full }).kind, 'growing');
    const user = decideSpace({
      ...base,
      operatorOwned: false,
      pvc: pvc('1Gi'),
      backups: full,
      storageClass: expandable,
    });
    assert.deepEqual(user, {
      kind: 'insufficient',
      neededBytes: 360 * MI,
      freeBytes: 124 * MI,
      capacity: '1Gi',
    });
    assert.equal(decideSpace({ ...base, pvc: pvc('1Gi'), backups: full }).kind, 'insufficient');
  });
});

describe('a backup without room on the fake apiserver', () => {
  it('fails saying how much it needs, and starts no Job', async () => {
    const api = new FakeApiserver();
    servingDatabase(api);
    api.put(STORAGE_CLASSES, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'standard' },
      provisioner: 'x',
    });
    api.put(PVCS, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      ...pvc('1Gi'),
      metadata: { name: 'orders-backups', namespace: 'shop' },
    });
    for (const [name, day] of [
      ['b1', '01'],
      ['b2', '02'],
      ['b3', '03'],
    ] as const) {
      const b = done(name, 300 * MI, `2026-01-${day}T00:00:00Z`);
      api.put(SAMPLEDB_BACKUPS, {
        ...b,
        metadata: { ...b.metadata, namespace: 'shop', creationTimestamp: `2026-01-${day}T00:00:00Z` },
      });
    }
    api.put(SAMPLEDB_BACKUPS, {
      ...sampleDbBackup('next', 'orders'),
      metadata: { name: 'next', namespace: 'shop', creationTimestamp: '2026-01-04T00:00:00Z' },
    });
    const { client, view, now } = api.operator();
    await new SampleDbBackupReconciler({ client, view, now }).reconcile(
      { namespace: 'shop', name: 'next' },
      { signal: new AbortController().signal, log: silentLogger, reconcileID: 't', retries: 0 },
    );
    const status = api.get(SAMPLEDB_BACKUPS, 'shop', 'next')?.status;
    assert.equal(status?.phase, 'Failed');
    assert.equal(status?.conditions?.find((c) => c.type === 'Failed')?.reason, 'BackupVolumeFull');
    assert.match(status?.message ?? '', /about 124 MiB free of 1Gi; this backup needs about 360 MiB/);
    assert.ok(!api.log.some((w) => w.plural === 'jobs'));
  });
});
