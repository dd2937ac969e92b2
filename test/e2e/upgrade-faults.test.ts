// Issue 12 on the real node, faults injected into the major upgrade 15 → 17: every operator pod killed while
// pg_upgrade runs, the upgrade Job's pod killed while it runs, and a preflight that fails (a column of a reg* type,
// which pg_upgrade refuses). Each either finishes on 17 after the fault or returns to 15 by itself, and either way
// the per-table checksums are those from before the upgrade.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import { OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE } from './support/install.ts';
import {
  apply,
  eventMessages,
  kubectlJson,
  kubectlOk,
  patchSpec,
  type SampleDbStatus,
  SEED_SQL,
  sampleDb,
  sql,
  statusOf,
  tableChecksums,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-upgrade-faults');

interface Upgraded extends SampleDbStatus {
  upgrade?: { step: string; message?: string; backup?: string; attempt?: number; retryRequest?: string };
}

/** A SampleDB on 15 with rows (and `extraSql`), its checksums, and the patch to 17 applied. */
async function raise(name: string, extraSql = ''): Promise<Record<string, string>> {
  await apply(cluster, [sampleDb(namespace, name, { version: '15', storage: { size: '1Gi' } })]);
  const ready = await waitReady(cluster, namespace, name);
  assert.match(ready.currentVersion ?? '', /^15\./);
  await sql(cluster, namespace, name, `${SEED_SQL}\n${extraSql}`);
  const checksums = await tableChecksums(cluster, namespace, name);
  await patchSpec(cluster, namespace, name, { version: '17' });
  return checksums;
}

/** Polls until the upgrade is settled (Done or Failed) and the database Ready; returns the status and the steps seen. */
async function settled(name: string): Promise<{ status: Upgraded; steps: Set<string> }> {
  const steps = new Set<string>();
  let last: Upgraded = {};
  try {
    const status = await pollUntil(
      `the upgrade of ${name} is settled`,
      async () => {
        last = (await statusOf(cluster, namespace, name)) as Upgraded;
        if (last.upgrade) steps.add(last.upgrade.step);
        const step = last.upgrade?.step;
        return (step === 'Done' || step === 'Failed') && last.phase === 'Ready' ? last : undefined;
      },
      { timeoutMs: 900_000, intervalMs: 2000 },
    );
    return { status, steps };
  } catch (error) {
    const more = await cluster.kubectl(['get', 'pods,jobs,events', '-n', namespace]);
    throw new Error(`${(error as Error).message}\nlast status: ${JSON.stringify(last)}\n${more.stdout}`);
  }
}

/** The names of the running pods of a Job. */
async function runningPodsOf(job: string): Promise<string[]> {
  const pods = await kubectlJson<{ items: { metadata: { name: string }; status?: { phase?: string } }[] }>(
    cluster,
    ['get', 'pods', '-n', namespace, '-l', `batch.kubernetes.io/job-name=${job}`],
  );
  return (pods?.items ?? []).filter((p) => p.status?.phase === 'Running').map((p) => p.metadata.name);
}

/** Either on 17 with the data, or back on 15 with the data and the cause named: nothing else is acceptable. */
async function assertEndedSafely(name: string, status: Upgraded, checksums: Record<string, string>) {
  const version = await sql(cluster, namespace, name, 'SHOW server_version;');
  if (status.upgrade?.step === 'Done') {
    assert.match(status.currentVersion ?? '', /^17\./);
    assert.match(version, /^17\./);
  } else {
    assert.equal(status.upgrade?.step, 'Failed');
    assert.match(status.currentVersion ?? '', /^15\./);
    assert.match(version, /^15\./);
    assert.ok(status.upgrade?.message, 'a failed upgrade says why');
  }
  assert.deepEqual(await tableChecksums(cluster, namespace, name), checksums);
}

describe('major upgrade faults on a real node', () => {
  it('every operator pod killed while pg_upgrade runs: the upgrade finishes after the operator restarts', async () => {
    const name = 'opkill';
    const checksums = await raise(name);
    const job = `${name}-upgrade-17-upgrade`;
    await pollUntil(
      'the upgrade Job runs',
      async () => ((await runningPodsOf(job)).length > 0 ? true : undefined),
      { timeoutMs: 600_000, intervalMs: 500 },
    );
    await kubectlOk(cluster, [
      'delete',
      'pods',
      '-n',
      OPERATOR_NAMESPACE,
      '-l',
      'app.kubernetes.io/name=sampledb-operator',
      '--grace-period=0',
      '--force',
    ]);
    const { status, steps } = await settled(name);
    process.stderr.write(`operator killed: ended ${status.upgrade?.step}; steps ${[...steps].join(' ')}\n`);
    assert.equal(status.upgrade?.step, 'Done', status.upgrade?.message);
    await assertEndedSafely(name, status, checksums);
    const rollout = await cluster.kubectl([
      'rollout',
      'status',
      `deployment/${OPERATOR_DEPLOYMENT}`,
      '-n',
      OPERATOR_NAMESPACE,
      '--timeout=120s',
    ]);
    assert.equal(rollout.code, 0, rollout.stderr);
  });

  it("the upgrade Job's pod killed while it runs: the Job's retry finishes, or the database returns to 15", async () => {
    const name = 'podkill';
    const checksums = await raise(name);
    const job = `${name}-upgrade-17-upgrade`;
    const [pod] = await pollUntil(
      'the upgrade Job runs',
      async () => {
        const running = await runningPodsOf(job);
        return running.length > 0 ? running : undefined;
      },
      { timeoutMs: 600_000, intervalMs: 300 },
    );
    // Killed the way an eviction or a drain kills it: SIGTERM, SIGKILL a second later.
    await kubectlOk(cluster, [
      'delete',
      'pod',
      pod as string,
      '-n',
      namespace,
      '--grace-period=1',
      '--wait=false',
    ]);
    const { status, steps } = await settled(name);
    const record = await kubectlJson<{ status?: { failed?: number; succeeded?: number } }>(cluster, [
      'get',
      'job',
      job,
      '-n',
      namespace,
    ]);
    process.stderr.write(
      `Job pod killed: ended ${status.upgrade?.step}; steps ${[...steps].join(' ')}; upgrade Job ${JSON.stringify(record?.status ?? {})}\n`,
    );
    if (status.upgrade?.step === 'Done')
      assert.ok(
        (record?.status?.failed ?? 0) >= 1,
        'the killed pod counts as a failed attempt: the retry finished',
      );
    await assertEndedSafely(name, status, checksums);
  });

  it('a failing preflight (pg_upgrade --check refuses a reg* column) returns to 15 with the cause; fixed and retried, attempt 2 ends on 17', async () => {
    const name = 'badcheck';
    const checksums = await raise(name, "CREATE TABLE procs (p regproc);\nINSERT INTO procs VALUES ('now');");
    const { status, steps } = await settled(name);
    assert.equal(status.upgrade?.step, 'Failed');
    assert.match(status.upgrade?.message ?? '', /preflight failed/);
    assert.ok(!steps.has('Upgrade') || !steps.has('RollingBack'), `steps ${[...steps]}`);
    await assertEndedSafely(name, status, checksums);
    const condition = status.conditions?.find((c) => c.type === 'Upgrading');
    assert.equal(condition?.reason, 'MajorUpgradeFailed');
    assert.match(condition?.message ?? '', /SampleDBBackup badcheck-pre-upgrade-17/);
    // The message names the failing check and the offending column first, not pg_upgrade's noise around it.
    assert.match(
      status.upgrade?.message ?? '',
      /pg_upgrade --check failed: Checking for reg\* data types in user tables/,
    );
    assert.match(status.upgrade?.message ?? '', /public\.procs\.p/);
    process.stderr.write(`preflight failed: ${status.upgrade?.message}\n`);

    // The user fixes the cause and asks for a retry: attempt 2, with a backup of its own, ends on 17.
    await sql(cluster, namespace, name, 'ALTER TABLE procs DROP COLUMN p;');
    const fixed = await tableChecksums(cluster, namespace, name);
    await kubectlOk(cluster, [
      'annotate',
      'sampledb',
      name,
      '-n',
      namespace,
      '--overwrite',
      'sampledb.io/retry-upgrade=after-dropping-regproc',
    ]);
    let last: Upgraded = {};
    const steps2 = new Set<string>();
    const retried = await pollUntil(
      'attempt 2 of the upgrade of badcheck is settled',
      async () => {
        last = (await statusOf(cluster, namespace, name)) as Upgraded;
        if (last.upgrade?.attempt !== 2) return undefined;
        steps2.add(last.upgrade.step);
        const step = last.upgrade.step;
        return (step === 'Done' || step === 'Failed') && last.phase === 'Ready' ? last : undefined;
      },
      { timeoutMs: 900_000, intervalMs: 2000 },
    ).catch(async (error: Error) => {
      const more = await cluster.kubectl(['get', 'pods,jobs,events,sampledbbackups', '-n', namespace]);
      throw new Error(`${error.message}\nlast status: ${JSON.stringify(last)}\n${more.stdout}`);
    });
    process.stderr.write(`retry: ended ${retried.upgrade?.step}; steps ${[...steps2].join(' ')}\n`);
    assert.equal(retried.upgrade?.step, 'Done', retried.upgrade?.message);
    assert.equal(retried.upgrade?.attempt, 2);
    assert.equal(retried.upgrade?.retryRequest, 'after-dropping-regproc');
    assert.match(retried.currentVersion ?? '', /^17\./);
    assert.match(await sql(cluster, namespace, name, 'SHOW server_version;'), /^17\./);
    assert.deepEqual(await tableChecksums(cluster, namespace, name), fixed);
    const events = await eventMessages(cluster, namespace, 'UpgradeRetried');
    assert.ok(events.length >= 1, 'an UpgradeRetried Event');
    const phaseOf = async (backup: string) =>
      (
        await kubectlJson<{ status?: { phase?: string } }>(cluster, [
          'get',
          'sampledbbackup',
          backup,
          '-n',
          namespace,
        ])
      )?.status?.phase;
    assert.equal(await phaseOf('badcheck-pre-upgrade-17-attempt-2'), 'Completed');
    assert.equal(await phaseOf('badcheck-pre-upgrade-17'), 'Completed', 'the attempt-1 backup is kept');
  });
});
