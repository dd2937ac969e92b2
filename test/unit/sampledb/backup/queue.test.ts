import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject } from '../../../../src/api/index.ts';
import { backupAhead } from '../../../../src/sampledb/backup/queue.ts';
import { sampleDbBackup } from '../../../support/sampledb.ts';

const b = (
  name: string,
  created: string,
  extra: { of?: string; phase?: 'Pending' | 'Running' | 'Completed' | 'Failed'; deleting?: boolean } = {},
): SampleDbBackupObject => {
  const backup = sampleDbBackup(name, extra.of ?? 'orders', extra.phase ? { phase: extra.phase } : undefined);
  const deleting = extra.deleting ? { deletionTimestamp: '2026-01-02T00:00:00Z' } : {};
  return { ...backup, metadata: { ...backup.metadata, creationTimestamp: created, ...deleting } };
};

describe('backupAhead', () => {
  const t1 = '2026-01-01T00:00:00Z';
  const t2 = '2026-01-01T00:01:00Z';
  it('lets exactly one of two unfinished backups of a SampleDB go: the older, then by name', () => {
    const all = [b('a', t2), b('b', t1), b('c', t1)];
    assert.equal(backupAhead(all[0] as SampleDbBackupObject, all), 'b');
    assert.equal(backupAhead(all[1] as SampleDbBackupObject, all), undefined);
    assert.equal(backupAhead(all[2] as SampleDbBackupObject, all), 'b');
  });
  it("ignores finished, deleting and other SampleDBs' backups", () => {
    const me = b('me', t2);
    for (const other of [
      b('done', t1, { phase: 'Completed' }),
      b('failed', t1, { phase: 'Failed' }),
      b('gone', t1, { deleting: true }),
      b('theirs', t1, { of: 'invoices' }),
    ])
      assert.equal(backupAhead(me, [me, other]), undefined, other.metadata.name);
    assert.equal(backupAhead(me, [me, b('running', t1, { phase: 'Running' })]), 'running');
  });
});
