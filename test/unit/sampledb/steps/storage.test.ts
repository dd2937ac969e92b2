import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { decideStorage } from '../../../../src/sampledb/steps/storage.ts';

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
