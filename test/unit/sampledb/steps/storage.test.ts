import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import { STORAGE_CLASSES } from '../../../../src/sampledb/resources.ts';
import { decideStorage, growStorage } from '../../../../src/sampledb/steps/storage.ts';
import type { ClusterView } from '../../../../src/sampledb/view.ts';
import type { Writer } from '../../../../src/sampledb/writer.ts';
import { sampleDb } from '../../../support/sampledb.ts';

const pvc = (requested: string, capacity?: string): V1PersistentVolumeClaim => ({
  spec: { storageClassName: 'standard', resources: { requests: { storage: requested } } },
  ...(capacity ? { status: { capacity: { storage: capacity } } } : {}),
});

describe('decideStorage', () => {
  it('expands when the class allows it', () => {
    assert.deepEqual(decideStorage(pvc('1Gi'), '2Gi', { provisioner: 'x', allowVolumeExpansion: true }), {
      kind: 'expand',
      from: '1Gi',
      to: '2Gi',
    });
  });
  it('explains when the class does not allow expansion', () => {
    assert.deepEqual(decideStorage(pvc('1Gi'), '2Gi', { provisioner: 'x' }), {
      kind: 'not-expandable',
      from: '1Gi',
      to: '2Gi',
      storageClass: 'standard',
    });
  });
  it('reports a resize in progress until the capacity follows, and nothing once it has', () => {
    assert.equal(decideStorage(pvc('2Gi', '1Gi'), '2Gi', undefined).kind, 'resizing');
    assert.equal(decideStorage(pvc('2Gi', '2Gi'), '2Gi', undefined).kind, 'none');
    assert.equal(decideStorage(undefined, '2Gi', undefined).kind, 'none');
  });
});

// The step itself, with a stub cache and writer (no API): with replicas every instance's claim grows.
describe('growStorage with replicas', () => {
  const claims = (size: string) =>
    new Map(
      [0, 1, 2].map((o) => [
        `data-orders-${o}`,
        { metadata: { name: `data-orders-${o}` }, ...pvc(size, size) } as V1PersistentVolumeClaim,
      ]),
    );
  const run = async (stored: Map<string, V1PersistentVolumeClaim>, expandable: boolean) => {
    const patched: string[] = [];
    const instance = resolveInstance({
      ...sampleDb({ storage: { size: '2Gi' }, instances: 3 }),
      status: { replication: { primary: 'orders-1', term: 2, instances: [] } },
    });
    const view = {
      get: (rt: { plural?: string }, _ns: string, name: string) =>
        rt === STORAGE_CLASSES ? { provisioner: 'x', allowVolumeExpansion: expandable } : stored.get(name),
    } as unknown as ClusterView;
    const write = {
      patch: async (_rt: unknown, ref: { name: string }) => {
        patched.push(ref.name);
        return stored.get(ref.name);
      },
    } as unknown as Writer;
    const outcome = await growStorage.run({
      instance,
      observed: { dataPvc: stored.get('data-orders-1') },
      view,
      write,
    } as never);
    return { patched, condition: outcome?.conditions?.[0] };
  };

  it('patches every instance’s claim, the primary’s among them', async () => {
    const { patched, condition } = await run(claims('1Gi'), true);
    assert.deepEqual(patched, ['data-orders-0', 'data-orders-1', 'data-orders-2']);
    assert.equal(condition?.status, 'False');
    assert.equal(condition?.reason, 'Expanding');
  });

  it('says which claim cannot grow', async () => {
    const { patched, condition } = await run(claims('1Gi'), false);
    assert.deepEqual(patched, []);
    assert.equal(condition?.reason, 'ExpansionNotSupported');
    assert.match(condition?.message ?? '', /data-orders-2 stays at 1Gi/);
  });

  it('is True once every claim has the size', async () => {
    const { patched, condition } = await run(claims('2Gi'), true);
    assert.deepEqual(patched, []);
    assert.equal(condition?.status, 'True');
    assert.match(
      condition?.message ?? '',
      /data-orders-0, data-orders-1, data-orders-2 have the requested size 2Gi/,
    );
  });
});
