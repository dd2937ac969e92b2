// What a failed major-upgrade Job says in the condition: the preflight script's first line names the failed
// pg_upgrade checks and the offending columns (FAILED_CHECKS_FUNCTION, run by sh on pg_upgrade outputs of 15 and 17),
// and the operator keeps that line when it shortens the termination message (terminationSummary).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { FAILED_CHECKS_FUNCTION } from '../../../src/sampledb/scripts/upgrade.ts';
import { jobState, terminationSummary } from '../../../src/sampledb/steps/major-upgrade.ts';

const dir = mkdtempSync(join(tmpdir(), 'sampledb-failed-checks-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function failedChecks(log: string): string {
  const path = join(dir, `log-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, log);
  const run = spawnSync('sh', ['-c', `set -eu\n${FAILED_CHECKS_FUNCTION}\nfailed_checks "$1"`, 'sh', path], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.replace(/\n$/, '');
}

const regFile = join(dir, 'tables_using_reg.txt');
writeFileSync(regFile, 'In database: app\n  public.procs.p\n  public.procs.q\n');

const reasons = (file: string) => `
Your installation contains one of the reg* data types in user tables.
A list of the problem columns is in the file:
    ${file}

Failure, exiting
`;

describe('failed_checks (preflight script)', () => {
  it('pg_upgrade 17: "failed check:" after "Checking data type usage", with the columns from the named file', () => {
    const log = `Performing Consistency Checks
-----------------------------
Checking cluster versions                                     ok
Checking data type usage                                      failed check: Checking for reg* data types in user tables

Data type checks failed: ${reasons(regFile)}`;
    assert.equal(
      failedChecks(log),
      'Checking for reg* data types in user tables: In database: app public.procs.p public.procs.q',
    );
  });

  it('pg_upgrade up to 16: the check marked "fatal"; two failed checks both named', () => {
    const log = `Checking for reg* data types in user tables                   fatal
${reasons(regFile)}
Checking for incompatible "line" data type                    fatal
`;
    assert.equal(
      failedChecks(log),
      'Checking for reg* data types in user tables; Checking for incompatible "line" data type: In database: app public.procs.p public.procs.q',
    );
  });

  it('bounded: a file of thousands of columns gives at most 10 lines of it, 600 characters in all', () => {
    const big = join(dir, 'tables_using_big.txt');
    writeFileSync(
      big,
      `In database: app\n${Array.from({ length: 5000 }, (_, i) => `  public.t${i}.c`).join('\n')}\n`,
    );
    const out = failedChecks(`Checking for reg* data types in user tables   fatal\n${reasons(big)}`);
    assert.ok(out.length <= 600, out);
    assert.match(out, /public\.t8\.c$/);
  });

  it('nothing when no check failed (another pg_upgrade error), or the file is gone', () => {
    assert.equal(failedChecks('could not connect to source postmaster\nFailure, exiting\n'), '');
    assert.equal(
      failedChecks(`Checking for reg* data types in user tables   fatal\n${reasons(join(dir, 'gone.txt'))}`),
      'Checking for reg* data types in user tables',
    );
  });
});

describe('terminationSummary', () => {
  it('a short message is kept whole', () => {
    assert.equal(terminationSummary('  preflight passed  '), 'preflight passed');
  });

  it('a long one keeps its first line and the end of the rest, within the limit', () => {
    const first =
      'pg_upgrade --check failed: Checking for reg* data types in user tables: In database: app public.procs.p';
    const message = `${first}\n${'noise '.repeat(400)}Failure, exiting`;
    const summary = terminationSummary(message);
    assert.ok(summary.length <= 1024, String(summary.length));
    assert.ok(summary.startsWith(`${first}\n... `), summary);
    assert.ok(summary.endsWith('Failure, exiting'));
  });

  it('a first line longer than half the limit is cut to half; one long line is cut to half', () => {
    const summary = terminationSummary(`${'x'.repeat(2000)}\n${'y'.repeat(2000)}`, 100);
    assert.ok(summary.startsWith(`${'x'.repeat(50)}\n... `));
    assert.ok(summary.length <= 100);
    assert.equal(terminationSummary('z'.repeat(3000), 100), 'z'.repeat(50));
  });

  it("is what a failed Job's state carries", () => {
    const job: V1Job = {
      status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] },
    };
    const message = `pg_upgrade --check failed: Checking for reg* data types in user tables: In database: app public.procs.p\n${'n'.repeat(3000)}`;
    const pod: V1Pod = {
      status: {
        containerStatuses: [
          {
            name: 'c',
            image: 'i',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 1, message } },
          },
        ],
      },
    } as V1Pod;
    const state = jobState(job, [pod]);
    assert.equal(state?.state, 'failed');
    const text = state?.state === 'failed' ? state.message : '';
    assert.ok(
      text.startsWith(
        'pg_upgrade --check failed: Checking for reg* data types in user tables: In database: app public.procs.p\n',
      ),
    );
    assert.ok(text.length <= 1024);
  });
});
