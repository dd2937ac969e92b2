// SampleDBDrill guard rails on a real node, against one SampleDB of one instance run by dist/'s operator: each rule
// refuses a kill-primary (or kill-replica) drill with its own reason, a message naming what it checked, the
// LastRunSucceeded condition False and a DrillRefused Event, and nothing is injected (the database pod keeps its uid,
// no canary Job is created). In order: the namespace without sampledb.io/drills=allowed; the SampleDB not Ready yet;
// one instance (no healthy instance would be left); a backup running; another drill (restore-check) running; a
// minor upgrade (spec.image) running. The drilled kind is kill-primary on one instance throughout, so a rule that did
// not hold would still be refused (WouldLeaveNoHealthyInstance) rather than hit the database: the assertion on the
// reason is what tells them apart. Only the restore-check run goes through (it is the drill in progress).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DrillRun } from '../../src/api/index.ts';
import { pollUntil } from '../../src/envtest/index.ts';
import { LOCAL_POSTGRES_REPOSITORY } from '../../src/envtest/real-node/images.ts';
import { canaryJobName } from '../../src/sampledb/drill/names.ts';
import { e2eSetup } from './support/cluster.ts';
import {
  apply,
  conditionOf,
  kubectlJson,
  kubectlOk,
  patchSpec,
  sampleDb,
  statusOf,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-drill-guards');
const NAME = 'guarded';
const POD = `${NAME}-0`;

interface DrillStatus {
  phase?: string;
  current?: Record<string, unknown>;
  runs?: DrillRun[];
  conditions?: { type: string; status: string; reason: string; message: string }[];
}

const drillStatus = async (name: string) =>
  (await kubectlJson<{ status?: DrillStatus }>(cluster, ['get', 'sampledbdrill', name, '-n', namespace]))
    ?.status ?? {};

const createDrill = (name: string, kind: string) =>
  apply(cluster, [
    {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDBDrill',
      metadata: { name, namespace },
      spec: { sampleDB: { name: NAME }, kind },
    },
  ]);

const podUid = async () =>
  (await kubectlJson<{ metadata: { uid: string } }>(cluster, ['get', 'pod', POD, '-n', namespace]))?.metadata
    .uid;

/** The drill's first run, once recorded. */
const firstRun = (name: string, timeoutMs = 60_000) =>
  pollUntil(`drill ${name} recorded a run`, async () => (await drillStatus(name)).runs?.[0], {
    timeoutMs,
    intervalMs: 250,
  });

/**
 * Creates a drill and asserts it is refused with `reason`, a message matching `message`, the condition and the
 * Event, and that nothing was injected: no target, no canary Job, the database pod (when there is one) the same.
 */
async function refused(
  name: string,
  kind: string,
  reason: string,
  message: RegExp,
  { podKept = true } = {},
): Promise<DrillRun> {
  const uidBefore = podKept ? await podUid() : undefined;
  await createDrill(name, kind);
  const run = await firstRun(name);
  console.log(`DRILL GUARD: ${name}: ${run.result} ${run.reason}: ${run.message}`);
  assert.equal(run.result, 'Refused', `${name}: ${run.reason}: ${run.message}`);
  assert.equal(run.reason, reason, `${name}: ${run.message}`);
  assert.match(run.message, message);
  assert.equal(run.target, undefined, `${name}: nothing was hit`);
  const status = await drillStatus(name);
  assert.equal(status.phase, 'Refused');
  assert.equal(status.current, undefined);
  const condition = status.conditions?.find((c) => c.type === 'LastRunSucceeded');
  assert.equal(condition?.status, 'False');
  assert.equal(condition?.reason, reason);
  assert.equal(condition?.message, run.message);
  const event = await pollUntil(
    `a DrillRefused Event for ${name}`,
    async () => {
      const events = await kubectlJson<{ items: { type?: string; message?: string }[] }>(cluster, [
        'get',
        'events',
        '-n',
        namespace,
        '--field-selector',
        `involvedObject.name=${name},reason=DrillRefused`,
      ]);
      return events?.items[0];
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  assert.equal(event.type, 'Warning');
  assert.ok(event.message?.includes(reason), `${name}: the Event names ${reason}: ${event.message}`);
  const job = await cluster.kubectl(['get', 'job', canaryJobName(name, 1), '-n', namespace]);
  assert.notEqual(job.code, 0, `${name}: no canary Job was created`);
  if (uidBefore) assert.equal(await podUid(), uidBefore, `${name}: the database pod was not touched`);
  return run;
}

describe('drill guard rails on a real node', () => {
  it('refuses in a namespace without the drills label, and while the SampleDB is not Ready', async () => {
    await apply(cluster, [
      sampleDb(namespace, NAME, { version: '15', storage: { size: '1Gi' }, instances: 1 }),
    ]);
    await refused(
      'unlabelled',
      'kill-primary',
      'NamespaceNotAllowed',
      /labelled sampledb\.io\/drills=allowed/,
    );
    await kubectlOk(cluster, ['label', 'namespace', namespace, 'sampledb.io/drills=allowed']);
    // The operator has written Ready=False (so its cache has the SampleDB) and the pod is still starting.
    await waitReady(cluster, namespace, NAME, { want: 'False', timeoutMs: 60_000 });
    await refused(
      'not-ready',
      'kill-primary',
      'SampleDBNotReady',
      /SampleDB guarded is not Ready \([A-Z]\w+: /,
    );
  });

  it('refuses kill-primary and kill-replica on one instance: no healthy instance would be left', async () => {
    await waitReady(cluster, namespace, NAME);
    await refused('one-primary', 'kill-primary', 'WouldLeaveNoHealthyInstance', /spec\.instances 1, 1 Ready/);
    await refused('one-replica', 'kill-replica', 'WouldLeaveNoHealthyInstance', /spec\.instances 1, 1 Ready/);
  });

  it('refuses while a backup runs, naming the backup', async () => {
    await apply(cluster, [
      {
        apiVersion: 'sampledb.io/v1alpha1',
        kind: 'SampleDBBackup',
        metadata: { name: `${NAME}-manual`, namespace },
        spec: { sampleDB: { name: NAME } },
      },
    ]);
    const phaseOf = async () =>
      (
        await kubectlJson<{ status?: { phase?: string } }>(cluster, [
          'get',
          'sampledbbackup',
          `${NAME}-manual`,
          '-n',
          namespace,
        ])
      )?.status?.phase;
    // The operator has seen the backup (it wrote a phase) and it has not finished.
    const phase = await pollUntil('the backup has a phase', async () => phaseOf(), {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    assert.ok(['Pending', 'Running'].includes(phase), `the backup is still running (${phase})`);
    await refused(
      'during-backup',
      'kill-primary',
      'BackupInProgress',
      new RegExp(`SampleDBBackup ${NAME}-manual`),
    );
    await pollUntil('the backup Completed', async () => (await phaseOf()) === 'Completed' || undefined, {
      timeoutMs: 180_000,
      intervalMs: 1000,
    });
  });

  it('refuses while another drill runs on the same SampleDB (a restore-check), which then succeeds', async () => {
    await createDrill('restore-check', 'restore-check');
    await pollUntil(
      'the restore-check run is in progress',
      async () => (await drillStatus('restore-check')).current,
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );
    await refused(
      'during-drill',
      'kill-primary',
      'DrillInProgress',
      /SampleDBDrill restore-check is running/,
    );
    const run = await firstRun('restore-check', 420_000);
    console.log(`DRILL GUARD: restore-check: ${JSON.stringify(run)}`);
    assert.equal(run.result, 'Succeeded', `${run.reason}: ${run.message}`);
  });

  it('refuses while a minor upgrade (spec.image) rolls the pod, naming the upgrade step', async () => {
    await waitReady(cluster, namespace, NAME);
    await patchSpec(cluster, namespace, NAME, { image: `${LOCAL_POSTGRES_REPOSITORY}:15-rebuilt` });
    await pollUntil(
      'Upgrading=True',
      async () =>
        conditionOf(await statusOf(cluster, namespace, NAME), 'Upgrading')?.status === 'True' || undefined,
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    // The upgrade replaces the pod itself: its uid is not what shows that the drill did nothing here.
    await refused('during-upgrade', 'kill-primary', 'UpgradeInProgress', /is being upgraded \(Upgrading: /, {
      podKept: false,
    });
    await pollUntil(
      'the upgrade is done and the SampleDB Ready',
      async () => {
        const s = await statusOf(cluster, namespace, NAME);
        return conditionOf(s, 'Upgrading')?.status === 'False' && conditionOf(s, 'Ready')?.status === 'True'
          ? s
          : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 1000 },
    );
  });
});
