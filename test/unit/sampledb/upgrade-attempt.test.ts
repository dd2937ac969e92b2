// The attempt an upgrade's objects are named for, and when a user's annotation starts the next one: pure, from the
// status record and the annotation alone, so a kill before the status write decides the same way again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  currentAttempt,
  preUpgradeBackupName,
  retryWanted,
  type UpgradeRecord,
} from '../../../src/sampledb/upgrade/plan.ts';

const failedOnOldFiles = { step: 'Failed', workload: { replicas: 1, dataMajor: 15 } } as never;

describe('currentAttempt', () => {
  const cases: Array<[string, UpgradeRecord | undefined, number]> = [
    ['no record: the first attempt', undefined, 1],
    [
      'a record for another major: the first attempt at this one',
      { toMajor: 16, step: 'Failed', attempt: 3 },
      1,
    ],
    ['a record without an attempt (an older operator): 1', { toMajor: 17, step: 'Failed' }, 1],
    [
      'the recorded attempt while it runs or after it failed',
      { toMajor: 17, step: 'Upgrade', attempt: 2 },
      2,
    ],
    [
      'the next attempt once the recorded one was abandoned',
      { toMajor: 17, step: 'Abandoned', attempt: 2 },
      3,
    ],
  ];
  for (const [name, record, attempt] of cases)
    it(name, () => assert.equal(currentAttempt(record, 17), attempt));
});

describe('retryWanted', () => {
  const record: UpgradeRecord = { toMajor: 17, step: 'Failed', attempt: 1, retryRequest: 'monday' };
  const cases: Array<[string, unknown, string | undefined, boolean]> = [
    ['a new annotation value after a failure on the old files', failedOnOldFiles, 'tuesday', true],
    ['the value already acted on: no second attempt', failedOnOldFiles, 'monday', false],
    ['no annotation: a failure stays failed', failedOnOldFiles, undefined, false],
    [
      'a failed rollback (the files are not the old major): no retry',
      { step: 'Failed', workload: { replicas: 0, dataMajor: undefined } },
      'tuesday',
      false,
    ],
    [
      'nothing failed: the annotation does nothing',
      { step: 'Upgrade', workload: { replicas: 0, dataMajor: 15 } },
      'x',
      false,
    ],
  ];
  for (const [name, plan, request, wanted] of cases)
    it(name, () => assert.equal(retryWanted(plan as never, 15, record, request), wanted));
});

describe('preUpgradeBackupName', () => {
  it('keeps the first attempt under the name it had before attempts existed; later ones have their own', () => {
    assert.equal(preUpgradeBackupName('orders', 17), 'orders-pre-upgrade-17');
    assert.equal(preUpgradeBackupName('orders', 17, 1), 'orders-pre-upgrade-17');
    assert.equal(preUpgradeBackupName('orders', 17, 3), 'orders-pre-upgrade-17-attempt-3');
  });
});
