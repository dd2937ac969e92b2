// Issue 12 on the real node: a SampleDB on PostgreSQL 15 with rows is raised to 17 and ends on 17 with the same
// per-table checksums, the pre-upgrade backup Completed and named in the status (the locally built images:
// localhost/postgres:15 on Debian bookworm, :17 on trixie, so the old installation crosses distributions).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import {
  apply,
  kubectlJson,
  patchSpec,
  SEED_SQL,
  sampleDb,
  sql,
  statusOf,
  tableChecksums,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-upgrade');
const name = 'ledger';

describe('major upgrade on a real node', () => {
  it('raises 15 to 17 with pg_upgrade: same rows, backup kept, the server reports 17', async () => {
    await apply(cluster, [sampleDb(namespace, name, { version: '15', storage: { size: '1Gi' } })]);
    const before = await waitReady(cluster, namespace, name);
    assert.match(before.currentVersion ?? '', /^15\./);
    await sql(cluster, namespace, name, SEED_SQL);
    const checksums = await tableChecksums(cluster, namespace, name);
    assert.equal(Object.keys(checksums).length, 2);

    await patchSpec(cluster, namespace, name, { version: '17' });
    const steps = new Set<string>();
    const status = await pollUntil(
      'the upgrade to 17 is done',
      async () => {
        const s = await statusOf(cluster, namespace, name);
        const upgrade = (s as { upgrade?: { step: string; message?: string } }).upgrade;
        if (upgrade) steps.add(upgrade.step);
        // A failed upgrade is settled too: end the wait and say why.
        return upgrade?.step === 'Failed' || (upgrade?.step === 'Done' && s.phase === 'Ready')
          ? s
          : undefined;
      },
      { timeoutMs: 900_000, intervalMs: 2000 },
    );
    const upgrade = (status as { upgrade?: { step: string; message?: string } }).upgrade;
    assert.equal(upgrade?.step, 'Done', upgrade?.message);
    assert.match(status.currentVersion ?? '', /^17\./, 'the server reports 17');
    assert.deepEqual(await tableChecksums(cluster, namespace, name), checksums);
    assert.match(await sql(cluster, namespace, name, 'SHOW server_version;'), /^17\./);
    const backup = await kubectlJson<{ status: { phase: string } }>(cluster, [
      'get',
      'sampledbbackup',
      `${name}-pre-upgrade-17`,
      '-n',
      namespace,
    ]);
    assert.equal(backup?.status.phase, 'Completed');
    for (const step of ['Backup', 'Upgrade', 'Done'])
      assert.ok(steps.has(step), `saw step ${step}: ${[...steps]}`);
  });
});
