import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AccessRecord } from '../../../src/envtest/index.ts';
import { GRANTED_UNUSED, grantKey, OPERATOR_GRANTS, privilegeReport } from '../../support/least-privilege.ts';

const access = (
  verb: string,
  group: string,
  resource: string,
  patch: Partial<AccessRecord> = {},
): AccessRecord => ({
  verb,
  group,
  resource,
  subresource: '',
  scope: 'namespace',
  count: 1,
  denied: 0,
  namespaces: ['shop'],
  ...patch,
});

describe('privilegeReport (audit log against permissions.ts)', () => {
  const grants = [
    { verb: 'get', group: '', resource: 'secrets', why: '' },
    { verb: 'delete', group: '', resource: 'secrets', why: '' },
    { verb: 'patch', group: 'sampledb.io', resource: 'sampledbs/status', why: '' },
    { verb: 'update', group: 'sampledb.io', resource: 'sampledbs/finalizers', why: '' },
  ];

  it('names grants nothing used, except the explained ones', () => {
    const report = privilegeReport(
      [access('get', '', 'secrets'), access('patch', 'sampledb.io', 'sampledbs', { subresource: 'status' })],
      grants,
      { 'update sampledb.io/sampledbs/finalizers': 'admission check' },
    );
    assert.deepEqual(report.unused, ['delete core/secrets']);
    assert.deepEqual(report.denied, []);
    assert.deepEqual(report.staleExceptions, []);
  });

  it('a refused request is a denial, not a use; an explained grant that was used is reported as such', () => {
    const report = privilegeReport(
      [
        access('delete', '', 'secrets', { denied: 1 }),
        access('update', 'sampledb.io', 'sampledbs', { subresource: 'finalizers' }),
      ],
      grants,
      { 'update sampledb.io/sampledbs/finalizers': 'admission check' },
    );
    assert.deepEqual(report.denied, ['delete core/secrets (namespace): 1 of 1 refused (shop)']);
    assert.ok(report.unused.includes('delete core/secrets'));
    assert.deepEqual(report.usedExceptions, ['update sampledb.io/sampledbs/finalizers']);
    assert.deepEqual(report.staleExceptions, []);
    const gone = privilegeReport([], grants, { 'delete core/pods': 'no longer granted' });
    assert.deepEqual(gone.staleExceptions, ['delete core/pods']);
  });

  it('a get beside a list of the same resource is never unused: it grants nothing the list does not', () => {
    const report = privilegeReport(
      [access('list', '', 'secrets')],
      [
        { verb: 'get', group: '', resource: 'secrets', why: '' },
        { verb: 'list', group: '', resource: 'secrets', why: '' },
        { verb: 'get', group: '', resource: 'pods', why: '' },
      ],
      {},
    );
    assert.deepEqual(report.unused, ['get core/pods']);
  });

  it('every exception explains a grant that permissions.ts actually makes', () => {
    const granted = new Set(OPERATOR_GRANTS.map(grantKey));
    for (const key of Object.keys(GRANTED_UNUSED)) assert.ok(granted.has(key), key);
  });
});
