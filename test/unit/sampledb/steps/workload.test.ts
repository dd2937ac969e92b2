import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import { desiredStatefulSet } from '../../../../src/sampledb/steps/workload.ts';
import { sampleDb } from '../../../support/sampledb.ts';

describe('desiredStatefulSet', () => {
  it('keeps the claim template size of the existing StatefulSet (immutable) while the spec grows', () => {
    const db = sampleDb({ storage: { size: '5Gi' } });
    const existing = desiredStatefulSet(resolveInstance(sampleDb({ storage: { size: '1Gi' } })), undefined);
    const desired = desiredStatefulSet(resolveInstance(db), existing);
    assert.equal(desired.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage, '1Gi');
    assert.equal(
      desiredStatefulSet(resolveInstance(db), undefined).spec?.volumeClaimTemplates?.[0]?.spec?.resources
        ?.requests?.storage,
      '5Gi',
    );
  });
});
