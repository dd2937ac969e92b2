// Mapping Secret, ConfigMap, SampleDBBackup and Job events to the SampleDBs they concern, through the field indexes
// of the SampleDB store, on a cache listed from a fake apiserver (support/fake-apiserver.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject, SampleDbObject } from '../../../src/api/index.ts';
import { controllerOwnerRefs, type KubeObject, type Stored } from '../../../src/runtime/index.ts';
import { initJob } from '../../../src/sampledb/init-job.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { SAMPLEDB_BACKUPS, SAMPLEDBS } from '../../../src/sampledb/resources.ts';
import { ClusterView } from '../../../src/sampledb/view.ts';
import { backupOfPod, byInstanceLabel, watchMaps } from '../../../src/sampledb/watches.ts';
import { sampleDb } from '../../support/sampledb.ts';
import { FakeApiserver } from './support/fake-apiserver.ts';

const object = (name: string, namespace = 'shop'): KubeObject => ({ metadata: { name, namespace } });
const backup = (name: string, of: string): SampleDbBackupObject => ({
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDBBackup',
  metadata: { name, namespace: 'shop' },
  spec: { sampleDB: { name: of } },
});
const names = (refs: { name: string }[]) => refs.map((r) => r.name).sort();

function cluster() {
  const api = new FakeApiserver();
  api.put(
    SAMPLEDBS,
    sampleDb(
      { bootstrap: { credentialsSecret: { name: 'app-creds' }, initSQL: { name: 'seed', key: 'init.sql' } } },
      { name: 'orders' },
    ),
  );
  api.put(SAMPLEDBS, sampleDb({}, { name: 'carts' }));
  api.put(SAMPLEDBS, sampleDb({ bootstrap: { fromBackup: { name: 'nightly' } } }, { name: 'orders-copy' }));
  api.put(
    SAMPLEDBS,
    sampleDb(
      { bootstrap: { credentialsSecret: { name: 'app-creds' } } },
      { name: 'other', namespace: 'elsewhere' },
    ),
  );
  api.put(SAMPLEDB_BACKUPS, backup('nightly', 'orders'));
  const cache = api.freshCache();
  // The mapping must use the indexes: a scan of every SampleDB would fail here.
  const store = cache.storeFor(SAMPLEDBS);
  assert.ok(store);
  store.list = () => {
    throw new Error('scanned every SampleDB');
  };
  return { cache, maps: watchMaps(new ClusterView(cache)) };
}

describe('watch mapping through field indexes (fake apiserver)', () => {
  it('maps a Secret to the SampleDBs of its namespace that read credentials from it, generated or the user’s', () => {
    const { maps } = cluster();
    assert.deepEqual(names(maps.referencedSecret(object('app-creds'))), ['orders']);
    assert.deepEqual(names(maps.referencedSecret(object('carts-credentials'))), ['carts']);
    assert.deepEqual(names(maps.referencedSecret(object('app-creds', 'elsewhere'))), ['other']);
    assert.deepEqual(maps.referencedSecret(object('unrelated')), []);
  });

  it('maps an initSQL ConfigMap to the SampleDB that runs it', () => {
    const { maps } = cluster();
    assert.deepEqual(names(maps.referencedConfigMap(object('seed'))), ['orders']);
    assert.deepEqual(maps.referencedConfigMap(object('seed', 'elsewhere')), []);
  });

  it('maps a SampleDBBackup to its SampleDB and to the SampleDBs restored from it, and back', () => {
    const { maps } = cluster();
    assert.deepEqual(names(maps.backupToSampleDbs(backup('nightly', 'orders'))), ['orders', 'orders-copy']);
    assert.deepEqual(names(maps.sampleDbToBackups(object('orders'))), ['nightly']);
    assert.deepEqual(maps.sampleDbToBackups(object('carts')), []);
  });

  it('follows an edit of the reference (the index is kept by the store)', () => {
    const { cache, maps } = cluster();
    const store = cache.storeFor<Stored<SampleDbObject>>(SAMPLEDBS);
    const orders = store?.get('shop/orders');
    assert.ok(store && orders);
    store.upsert({
      ...orders,
      metadata: { ...orders.metadata, resourceVersion: '999' },
      spec: { ...orders.spec, bootstrap: { credentialsSecret: { name: 'rotated' } } },
    });
    assert.deepEqual(maps.referencedSecret(object('app-creds')), []);
    assert.deepEqual(names(maps.referencedSecret(object('rotated'))), ['orders']);
  });

  it('maps a Job to the SampleDB that owns it, and our labelled objects and backup pods by label and annotation', () => {
    const job = initJob(resolveInstance(sampleDb()));
    const stored = {
      ...job,
      metadata: { ...job.metadata, name: 'orders-init', namespace: 'shop' },
    } as KubeObject;
    assert.deepEqual(controllerOwnerRefs(stored, SAMPLEDBS), [{ namespace: 'shop', name: 'orders' }]);
    assert.deepEqual(byInstanceLabel(stored), [{ namespace: 'shop', name: 'orders' }]);
    assert.deepEqual(
      byInstanceLabel({ metadata: { labels: { 'app.kubernetes.io/instance': 'orders' } } }),
      [],
    );
    assert.deepEqual(
      backupOfPod({ metadata: { namespace: 'shop', annotations: { 'sampledb.io/backup': 'nightly' } } }),
      [{ namespace: 'shop', name: 'nightly' }],
    );
  });
});
