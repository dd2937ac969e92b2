// The major upgrade through the whole reconcile, on the fake apiserver with the controllers played by the test: a
// SampleDB on 15 raised to 17 ends on 17 with its backup named; a failing Job ends on 15; an operator killed at any
// write of the upgrade (a fresh cache and reconciler each time) still finishes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { SampleDbObject } from '../../../../src/api/index.ts';
import { silentLogger } from '../../../../src/runtime/index.ts';
import { SampleDbReconciler } from '../../../../src/sampledb/reconciler.ts';
import { JOBS, PODS, SAMPLEDB_BACKUPS, SAMPLEDBS, STATEFULSETS } from '../../../../src/sampledb/resources.ts';
import { sampleDb } from '../../../support/sampledb.ts';
import { Crash, FakeApiserver } from '../support/fake-apiserver.ts';

const REQ = { namespace: 'shop', name: 'orders' };
const rc = { signal: new AbortController().signal, log: silentLogger, reconcileID: 't', retries: 0 };
const MINORS: Record<string, string> = { '15': '15.8', '17': '17.2' };

/** Plays the StatefulSet, Job and backup controllers and the kubelet, one move per call. */
class Cluster {
  readonly api = new FakeApiserver();
  clock = Date.parse('2026-02-01T00:00:00Z');
  readonly failing = new Set<string>();
  /** Jobs that keep running (their pod Running) until removed from here. */
  readonly held = new Set<string>();
  readonly jobsRun: string[] = [];
  crashes = 0;

  async reconcile(): Promise<void> {
    const now = new Date(this.clock);
    const { client, view } = this.api.operator(() => now);
    await new SampleDbReconciler({ client, view, now: () => now }).reconcile(REQ, rc);
  }

  async play(): Promise<void> {
    this.clock += 30_000;
    const api = this.api;
    await this.#play(api);
  }

  async #play(api: FakeApiserver): Promise<void> {
    const sts = api.get(STATEFULSETS, 'shop', 'orders') as V1StatefulSet | undefined;
    const pod = api.get(PODS, 'shop', 'orders-0') as V1Pod | undefined;
    if (sts) {
      const image = sts.spec?.template.spec?.containers.find((c) => c.name === 'postgres')?.image as string;
      const replicas = sts.spec?.replicas ?? 1;
      if (pod && (replicas === 0 || pod.spec?.containers[0]?.image !== image)) {
        api.remove(PODS, 'shop', 'orders-0');
      } else if (!pod && replicas === 1) {
        api.put(PODS, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'orders-0', namespace: 'shop' },
          spec: { containers: [{ name: 'postgres', image }] },
          status: { conditions: [{ type: 'Ready', status: 'True' }] },
        });
      }
      const ready = replicas === 1 && pod ? 1 : 0;
      api.put(STATEFULSETS, { ...sts, status: { replicas, readyReplicas: ready } } as V1StatefulSet);
    }
    for (const backup of api.list(SAMPLEDB_BACKUPS)) {
      if (backup.status?.phase) continue;
      api.put(SAMPLEDB_BACKUPS, {
        ...backup,
        status: { phase: 'Completed', completedAt: new Date(this.clock).toISOString() },
      });
    }
    for (const job of api.list(JOBS) as V1Job[]) {
      if (job.status?.succeeded || job.status?.conditions?.length) continue;
      const name = job.metadata?.name as string;
      // A Job runs only against a server that is up (clients, cleanup) or files that are offline (the others).
      const offline = /-upgrade-\d+(-a\d+)?-(preflight|upgrade|rollback)$/.test(name);
      if (offline ? Boolean(pod) : !(pod && sts?.status?.readyReplicas)) continue;
      const podOf = (status: V1Pod['status']): V1Pod => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${name}-pod`,
          namespace: 'shop',
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: job.metadata?.uid as string }],
        },
        status,
      });
      if (this.held.has(name)) {
        api.put(PODS, podOf({ phase: 'Running' }));
        continue;
      }
      this.jobsRun.push(name);
      const image = job.spec?.template.spec?.containers[0]?.image ?? '';
      const failed = this.failing.has(name);
      api.put(
        PODS,
        podOf({
          phase: failed ? 'Failed' : 'Succeeded',
          containerStatuses: [
            {
              name: 'c',
              image,
              imageID: '',
              ready: false,
              restartCount: 0,
              state: {
                terminated: failed
                  ? { exitCode: 1, message: `${name} broke` }
                  : {
                      exitCode: 0,
                      message: `server_version=${MINORS[image.split(':').at(-1) ?? ''] ?? ''}\n`,
                    },
              },
            },
          ],
        }),
      );
      api.put(JOBS, {
        ...job,
        status: failed
          ? { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] }
          : { succeeded: 1, completionTime: new Date(this.clock) as never },
      } as V1Job);
    }
  }

  db(): SampleDbObject {
    return this.api.get(SAMPLEDBS, 'shop', 'orders') as SampleDbObject;
  }

  async settle(until: (db: SampleDbObject) => boolean, limit = 80): Promise<void> {
    for (let i = 0; i < limit; i++) {
      try {
        await this.reconcile();
      } catch (err) {
        if (!(err instanceof Crash)) throw err;
        this.crashes++;
      }
      await this.play();
      if (until(this.db())) return;
    }
    assert.fail(`did not settle: ${JSON.stringify(this.db().status, null, 1)}`);
  }

  stsImage(): string | undefined {
    const sts = this.api.get(STATEFULSETS, 'shop', 'orders') as V1StatefulSet;
    return sts.spec?.template.spec?.containers.find((c) => c.name === 'postgres')?.image;
  }
}

async function onFifteen(): Promise<Cluster> {
  const cluster = new Cluster();
  cluster.api.put(SAMPLEDBS, sampleDb({ version: '15' }));
  await cluster.settle((db) => db.status?.phase === 'Ready' && db.status.currentVersion === '15.8');
  cluster.api.put(SAMPLEDBS, { ...cluster.db(), spec: { ...cluster.db().spec, version: '17' } });
  cluster.jobsRun.length = 0;
  return cluster;
}

const upgrading = (db: SampleDbObject) => db.status?.conditions?.find((c) => c.type === 'Upgrading');

describe('major upgrade through the reconcile (fake apiserver)', () => {
  it('raises 15 to 17: backup, preflight, upgrade, the new server verified, old files removed', async () => {
    const cluster = await onFifteen();
    const phases = new Set<string>();
    await cluster.settle((db) => {
      phases.add(String(db.status?.phase));
      return db.status?.upgrade?.step === 'Done' && db.status.phase === 'Ready';
    });
    const db = cluster.db();
    assert.equal(db.status?.currentVersion, '17.2');
    assert.equal(db.status?.upgrade?.backup, 'orders-pre-upgrade-17');
    assert.equal(
      cluster.api.get(SAMPLEDB_BACKUPS, 'shop', 'orders-pre-upgrade-17')?.status?.phase,
      'Completed',
    );
    assert.equal(cluster.stsImage(), 'docker.io/library/postgres:17');
    assert.equal(upgrading(db)?.reason, 'UpToDate');
    assert.ok(phases.has('Upgrading'));
    assert.deepEqual(
      cluster.jobsRun.map((name) => name.replace(/-[0-9a-f]{10}$/, '')),
      [
        'orders-upgrade-17-preflight',
        'orders-upgrade-17-upgrade',
        'orders-version',
        'orders-upgrade-17-cleanup',
      ],
    );
  });

  it('returns to 15 when the upgrade Job fails, naming the cause and the backup', async () => {
    const cluster = await onFifteen();
    cluster.failing.add('orders-upgrade-17-upgrade');
    await cluster.settle((db) => db.status?.upgrade?.step === 'Failed' && db.status.phase === 'Ready');
    const db = cluster.db();
    assert.equal(cluster.stsImage(), 'docker.io/library/postgres:15');
    assert.equal(db.status?.currentVersion, '15.8');
    const condition = upgrading(db);
    assert.equal(condition?.reason, 'MajorUpgradeFailed');
    assert.match(condition?.message ?? '', /orders-upgrade-17-upgrade broke/);
    assert.match(condition?.message ?? '', /SampleDBBackup orders-pre-upgrade-17/);
    assert.ok(cluster.jobsRun.includes('orders-upgrade-17-rollback'));
    assert.ok(!cluster.jobsRun.includes('orders-upgrade-17-cleanup'));
  });

  it('with replicas and the primary off pod 0: asks for a switchover to pod 0 before anything goes offline', async () => {
    const cluster = await onFifteen();
    const db = cluster.db();
    // A SampleDB that had replicas, its primary elected on orders-1 (the record stays after a scale down to one).
    cluster.api.put(SAMPLEDBS, {
      ...db,
      status: { ...db.status, replication: { primary: 'orders-1', term: 2, instances: [] } },
    });
    for (let i = 0; i < 4; i++) {
      await cluster.reconcile();
      await cluster.play();
    }
    const after = cluster.db();
    assert.equal(after.metadata.annotations?.['sampledb.io/switchover-to'], 'orders-0');
    assert.equal(after.status?.upgrade?.step, 'Switchover');
    const condition = upgrading(after);
    assert.equal(condition?.status, 'True');
    assert.match(condition?.message ?? '', /handing the primary over from orders-1 to orders-0/);
    // The pre-upgrade backup ran (the files were online); nothing offline did, and the StatefulSet is not stopped.
    assert.ok(
      cluster.jobsRun.every((name) => !/-upgrade-17-(preflight|upgrade)$/.test(name)),
      `${cluster.jobsRun}`,
    );
    assert.equal(cluster.stsImage(), 'docker.io/library/postgres:15');
    const sts = cluster.api.get(STATEFULSETS, 'shop', 'orders') as V1StatefulSet;
    assert.ok((sts.spec?.replicas ?? 0) > 0);
    const asked = cluster.api.events.filter((e) =>
      /Handing the primary over to orders-0/.test((e as { note?: string }).note ?? ''),
    );
    assert.equal(asked.length, 1);
  });

  it('waits for the maintenance window before the backup, and says until when', async () => {
    const cluster = await onFifteen();
    const db = cluster.db();
    cluster.api.put(SAMPLEDBS, {
      ...db,
      spec: { ...db.spec, upgrade: { maintenanceWindow: { schedule: '0 2 * * SUN', duration: '4h' } } },
    });
    await cluster.reconcile();
    await cluster.play();
    await cluster.reconcile();
    const status = cluster.db().status;
    assert.equal(status?.upgrade?.step, 'WaitingForWindow');
    // The fake clock starts at midnight of Sunday 2026-02-01: the window opens at 02:00.
    assert.equal(status?.upgrade?.waitingUntil, '2026-02-01T02:00:00.000Z');
    assert.match(upgrading(cluster.db())?.message ?? '', /opens at 2026-02-01T02:00:00.000Z/);
    assert.equal(cluster.api.get(SAMPLEDB_BACKUPS, 'shop', 'orders-pre-upgrade-17'), undefined);
    assert.equal(cluster.stsImage(), 'docker.io/library/postgres:15');
    // Once the window is open, the upgrade starts.
    cluster.clock = Date.parse('2026-02-01T02:00:30Z');
    await cluster.settle((d) => d.status?.upgrade?.step === 'Done' && d.status.phase === 'Ready');
  });

  it('finishes when the operator is killed at any write of the upgrade', async () => {
    const reference = await onFifteen();
    const start = reference.api.log.length;
    await reference.settle((db) => db.status?.upgrade?.step === 'Done' && db.status.phase === 'Ready');
    const writes = reference.api.log.length - start;
    assert.ok(writes > 10, `${writes} writes`);
    for (let crashAt = 1; crashAt <= writes; crashAt += 1) {
      const cluster = await onFifteen();
      cluster.api.crashAt = cluster.api.log.filter((w) => w.verb !== 'note').length + crashAt;
      await cluster.settle((db) => db.status?.upgrade?.step === 'Done' && db.status.phase === 'Ready');
      assert.equal(cluster.crashes, 1, `the operator was killed at write ${crashAt}`);
      assert.equal(cluster.db().status?.currentVersion, '17.2', `crash at write ${crashAt}`);
    }
  });

  it('carries the upgrade through when spec.version is set back after the files were converted', async () => {
    const cluster = await onFifteen();
    // The window: the upgrade Job has swapped the 17 files in; no reconcile has seen it yet.
    await cluster.settle(() => cluster.jobsRun.includes('orders-upgrade-17-upgrade'));
    cluster.api.put(SAMPLEDBS, { ...cluster.db(), spec: { ...cluster.db().spec, version: '15' } });
    const olderServerOnNewFiles = () => {
      const pod = cluster.api.get(PODS, 'shop', 'orders-0') as V1Pod | undefined;
      return pod?.spec?.containers[0]?.image === 'docker.io/library/postgres:15';
    };
    await cluster.settle((db) => {
      assert.ok(!olderServerOnNewFiles(), 'PostgreSQL 15 started on the 17 files');
      return db.status?.currentVersion === '17.2' && cluster.jobsRun.includes('orders-upgrade-17-cleanup');
    });
    // Settled: it stays on 17, refusing the spec with a reason, a message and an Event.
    for (let i = 0; i < 3; i++) {
      await cluster.reconcile();
      await cluster.play();
      assert.ok(!olderServerOnNewFiles(), 'PostgreSQL 15 started on the 17 files');
    }
    assert.equal(cluster.stsImage(), 'docker.io/library/postgres:17');
    const condition = upgrading(cluster.db());
    assert.equal(condition?.reason, 'DowngradeRefused');
    assert.match(condition?.message ?? '', /spec asks for PostgreSQL 15/);
    const refused = cluster.api.events.filter(
      (e) => (e as { reason?: string }).reason === 'DowngradeRefused',
    );
    assert.equal(refused.length, 1);
    const after = cluster.api.get(STATEFULSETS, 'shop', 'orders') as V1StatefulSet;
    assert.equal(after.metadata?.annotations?.['sampledb.io/data-major'], '17');
    assert.equal(after.metadata?.annotations?.['sampledb.io/upgrading-to'], undefined);
  });

  it('refuses a spec below the files after Done: the StatefulSet stays on 17, with a reason and one Event', async () => {
    const cluster = await onFifteen();
    await cluster.settle((db) => db.status?.upgrade?.step === 'Done' && db.status.phase === 'Ready');
    cluster.api.put(SAMPLEDBS, { ...cluster.db(), spec: { ...cluster.db().spec, version: '15' } });
    for (let i = 0; i < 3; i++) {
      await cluster.reconcile();
      await cluster.play();
    }
    assert.equal(cluster.stsImage(), 'docker.io/library/postgres:17');
    assert.equal(upgrading(cluster.db())?.reason, 'DowngradeRefused');
    const refused = cluster.api.events.filter(
      (e) => (e as { reason?: string }).reason === 'DowngradeRefused',
    );
    assert.equal(refused.length, 1);
  });

  it('set back during the Preflight step: the old server waits until the preflight Job stopped reading', async () => {
    const cluster = await onFifteen();
    cluster.held.add('orders-upgrade-17-preflight');
    await cluster.settle(
      () => cluster.api.get(PODS, 'shop', 'orders-upgrade-17-preflight-pod')?.status?.phase === 'Running',
    );
    cluster.api.put(SAMPLEDBS, { ...cluster.db(), spec: { ...cluster.db().spec, version: '15' } });
    // The preflight still reads the files: no server of any major may start on them.
    for (let i = 0; i < 5; i++) {
      await cluster.reconcile();
      await cluster.play();
      assert.equal(
        cluster.api.get(PODS, 'shop', 'orders-0'),
        undefined,
        'a server started beside the preflight',
      );
    }
    const waiting = upgrading(cluster.db());
    assert.equal(waiting?.status, 'True');
    assert.match(
      waiting?.message ?? '',
      /spec.version is 15 again; PostgreSQL 15 starts once the preflight Job/,
    );
    const sts = cluster.api.get(STATEFULSETS, 'shop', 'orders') as V1StatefulSet;
    assert.equal(sts.spec?.replicas, 0);
    assert.equal(sts.metadata?.annotations?.['sampledb.io/upgrading-to'], '17');
    // The preflight ends: PostgreSQL 15 starts on its files, and the upgrade Job never ran.
    cluster.held.delete('orders-upgrade-17-preflight');
    await cluster.settle(
      (db) => db.status?.phase === 'Ready' && Boolean(cluster.api.get(PODS, 'shop', 'orders-0')),
    );
    assert.equal(cluster.stsImage(), 'docker.io/library/postgres:15');
    assert.equal(cluster.api.get(JOBS, 'shop', 'orders-upgrade-17-upgrade'), undefined);
    const after = cluster.api.get(STATEFULSETS, 'shop', 'orders') as V1StatefulSet;
    assert.equal(after.metadata?.annotations?.['sampledb.io/upgrading-to'], undefined);
    assert.equal(after.metadata?.annotations?.['sampledb.io/data-major'], '15');

    assert.equal(cluster.db().status?.upgrade?.step, 'Abandoned');

    // Asked for again: a new attempt, with a backup of the data as it is now and a preflight of its own; pg_upgrade
    // is created only once the server is down.
    cluster.api.put(SAMPLEDBS, { ...cluster.db(), spec: { ...cluster.db().spec, version: '17' } });
    for (let i = 0; i < 80 && cluster.db().status?.upgrade?.step !== 'Done'; i++) {
      await cluster.reconcile();
      if (
        cluster.api.get(JOBS, 'shop', 'orders-upgrade-17-upgrade') &&
        !cluster.jobsRun.includes('orders-upgrade-17-upgrade')
      )
        assert.equal(
          cluster.api.get(PODS, 'shop', 'orders-0'),
          undefined,
          'the upgrade Job was created beside a server',
        );
      await cluster.play();
    }
    assert.equal(cluster.db().status?.upgrade?.step, 'Done');
    assert.equal(cluster.db().status?.currentVersion, '17.2');
    assert.equal(cluster.db().status?.upgrade?.attempt, 2);
    assert.equal(cluster.db().status?.upgrade?.backup, 'orders-pre-upgrade-17-attempt-2');
    assert.ok(cluster.jobsRun.includes('orders-upgrade-17-a2-preflight'));
    assert.ok(cluster.jobsRun.includes('orders-upgrade-17-a2-upgrade'));
    assert.ok(!cluster.jobsRun.includes('orders-upgrade-17-upgrade'));
    // The first attempt's backup is a user's backup: kept.
    assert.ok(cluster.api.get(SAMPLEDB_BACKUPS, 'shop', 'orders-pre-upgrade-17'));
  });

  const annotate = (cluster: Cluster, value: string) => {
    const db = cluster.db();
    cluster.api.put(SAMPLEDBS, {
      ...db,
      metadata: {
        ...db.metadata,
        annotations: { ...db.metadata.annotations, 'sampledb.io/retry-upgrade': value },
      },
    });
  };
  const retriedEvents = (cluster: Cluster) =>
    cluster.api.events.filter((e) => (e as { reason?: string }).reason === 'UpgradeRetried');
  const failedOnFifteen = (db: SampleDbObject) =>
    db.status?.upgrade?.step === 'Failed' && db.status.phase === 'Ready';

  it('a failed upgrade stays failed until the retry-upgrade annotation asks; then a new attempt with a new backup', async () => {
    const cluster = await onFifteen();
    cluster.failing.add('orders-upgrade-17-upgrade');
    await cluster.settle(failedOnFifteen);
    assert.equal(cluster.db().status?.upgrade?.attempt, 1);
    assert.match(
      upgrading(cluster.db())?.message ?? '',
      /sampledb\.io\/retry-upgrade to a new value for attempt 2/,
    );
    // No retry by itself.
    for (let i = 0; i < 5; i++) {
      await cluster.reconcile();
      await cluster.play();
    }
    assert.equal(cluster.db().status?.upgrade?.step, 'Failed');
    assert.equal(cluster.api.get(SAMPLEDB_BACKUPS, 'shop', 'orders-pre-upgrade-17-attempt-2'), undefined);
    assert.equal(retriedEvents(cluster).length, 0);

    cluster.failing.clear();
    cluster.jobsRun.length = 0;
    annotate(cluster, 'fixed-1');
    const messages = new Set<string>();
    await cluster.settle((db) => {
      messages.add(upgrading(db)?.message ?? '');
      return db.status?.upgrade?.step === 'Done' && db.status.phase === 'Ready';
    });
    const status = cluster.db().status;
    assert.equal(status?.currentVersion, '17.2');
    assert.equal(status?.upgrade?.attempt, 2);
    assert.equal(status?.upgrade?.retryRequest, 'fixed-1');
    assert.equal(status?.upgrade?.backup, 'orders-pre-upgrade-17-attempt-2');
    assert.ok(
      [...messages].some((m) => /to 17 \(attempt 2\)/.test(m)),
      [...messages].join('\n'),
    );
    assert.deepEqual(
      cluster.jobsRun.map((name) => name.replace(/-[0-9a-f]{10}$/, '')),
      [
        'orders-upgrade-17-a2-preflight',
        'orders-upgrade-17-a2-upgrade',
        'orders-version',
        'orders-upgrade-17-a2-cleanup',
      ],
    );
    // Both backups: the first attempt's is kept, the second is of the data at the retry.
    assert.ok(cluster.api.get(SAMPLEDB_BACKUPS, 'shop', 'orders-pre-upgrade-17'));
    assert.equal(
      cluster.api.get(SAMPLEDB_BACKUPS, 'shop', 'orders-pre-upgrade-17-attempt-2')?.status?.phase,
      'Completed',
    );
    assert.equal(retriedEvents(cluster).length, 1);
    assert.match(
      String((retriedEvents(cluster)[0] as { note?: string }).note),
      /Attempt 2 .*retry-upgrade=fixed-1/,
    );
  });

  it('one annotation value starts one attempt: a second failure stays failed until a new value', async () => {
    const cluster = await onFifteen();
    cluster.failing.add('orders-upgrade-17-upgrade');
    cluster.failing.add('orders-upgrade-17-a2-upgrade');
    await cluster.settle(failedOnFifteen);
    annotate(cluster, 'again');
    await cluster.settle((db) => db.status?.upgrade?.attempt === 2 && failedOnFifteen(db));
    for (let i = 0; i < 5; i++) {
      await cluster.reconcile();
      await cluster.play();
    }
    assert.equal(cluster.db().status?.upgrade?.attempt, 2);
    assert.equal(cluster.db().status?.upgrade?.step, 'Failed');
    assert.equal(cluster.api.get(SAMPLEDB_BACKUPS, 'shop', 'orders-pre-upgrade-17-attempt-3'), undefined);
    assert.equal(retriedEvents(cluster).length, 1);
    annotate(cluster, 'and-again');
    await cluster.settle((db) => db.status?.upgrade?.step === 'Done' && db.status.phase === 'Ready');
    assert.equal(cluster.db().status?.upgrade?.attempt, 3);
    assert.equal(retriedEvents(cluster).length, 2);
  });

  it('a retry finishes when the operator is killed at any write of it', async () => {
    const start = async () => {
      const cluster = await onFifteen();
      cluster.failing.add('orders-upgrade-17-upgrade');
      await cluster.settle(failedOnFifteen);
      cluster.failing.clear();
      annotate(cluster, 'go');
      return cluster;
    };
    const reference = await start();
    const before = reference.api.log.length;
    await reference.settle((db) => db.status?.upgrade?.step === 'Done' && db.status.phase === 'Ready');
    const writes = reference.api.log.length - before;
    for (let crashAt = 1; crashAt <= writes; crashAt += 1) {
      const cluster = await start();
      cluster.api.crashAt = cluster.api.log.filter((w) => w.verb !== 'note').length + crashAt;
      await cluster.settle((db) => db.status?.upgrade?.step === 'Done' && db.status.phase === 'Ready');
      assert.equal(cluster.crashes, 1, `the operator was killed at write ${crashAt}`);
      assert.equal(cluster.db().status?.upgrade?.attempt, 2, `crash at write ${crashAt}`);
      assert.equal(cluster.db().status?.currentVersion, '17.2', `crash at write ${crashAt}`);
      assert.equal(cluster.api.get(SAMPLEDB_BACKUPS, 'shop', 'orders-pre-upgrade-17-attempt-3'), undefined);
    }
  });
});
