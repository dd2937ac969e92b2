// End to end: a SampleDB with spec.backup.schedule gets SampleDBBackups from the operator process on that schedule,
// run by the real backup script against a real PostgreSQL (the FakeKubelet runs the backup pods).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SampleDbBackupObject, SampleDbObject } from '../../../src/api/index.ts';
import type { KubeObject } from '../../../src/runtime/index.ts';
import { JOBS } from '../../../src/sampledb/resources.ts';
import type { OperatorProcess } from '../support/operator.ts';
import { claimDirectory, runScriptPod } from '../support/script-pod.ts';
import { BACKUPS, type E2eEnv, eventually, getOrUndefined, SAMPLEDBS, startE2eEnv } from './e2e-env.ts';

type Db = SampleDbObject & KubeObject;
type Backup = SampleDbBackupObject & KubeObject;
type Condition = { type: string; status: string; reason: string; message: string };

let env: E2eEnv;
let operator: OperatorProcess;

before(async () => {
  env = await startE2eEnv();
  env.pg.query('CREATE DATABASE app');
  env.pg.query(
    'CREATE TABLE orders (id int PRIMARY KEY, item text); INSERT INTO orders VALUES (1, $$tea$$)',
    'app',
  );
  env.kubelet.on(
    (pod) => pod.metadata.labels?.['app.kubernetes.io/component'] === 'backup',
    async (pod, kubelet) => {
      const result = await runScriptPod(pod, kubelet.http, env.pg, env.volumesDir);
      await kubelet.finish(pod, result.code ?? 1, result.message);
    },
  );
  operator = env.startOperator();
});

after(async () => {
  await env?.stop();
});

describe('scheduled backups (operator process, ServiceAccount RBAC)', () => {
  it('a SampleDB scheduled every minute gets a scheduled SampleDBBackup that completes', async () => {
    const ns = await env.namespace('sched');
    await env.http.create(SAMPLEDBS, {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDB',
      metadata: { name: 'orders', namespace: ns },
      spec: { version: '16', storage: { size: '1Gi' }, backup: { schedule: '* * * * *' } },
    } as Db);

    // The first slot after creation is at most a minute away; the backup then runs pg_dump.
    let seen: Backup[] = [];
    const done = await eventually(
      'a scheduled backup Completed',
      async () => {
        seen = (await env.http.list<Backup>(BACKUPS, { namespace: ns })).items;
        return seen.find(
          (b) => b.metadata.labels?.['sampledb.io/trigger'] === 'schedule' && b.status?.phase === 'Completed',
        );
      },
      operator,
      110_000,
    ).catch((err: unknown) => {
      throw new Error(
        `${String(err)}\n--- backups ---\n${JSON.stringify(seen.map((b) => [b.metadata, b.status]))}`,
      );
    });
    const name = done.metadata.name ?? '';
    const slot = done.metadata.annotations?.['sampledb.io/scheduled-at'] ?? '';
    assert.match(name, /^orders-\d{12}$/);
    assert.equal(name, `orders-${slot.slice(0, 16).replace(/[-T:]/g, '')}`);
    assert.equal(done.metadata.ownerReferences, undefined, 'a scheduled backup outlives its SampleDB');
    assert.equal(done.status?.location, `pvc://orders-backups/orders/${name}.dump`);
    assert.ok(existsSync(join(claimDirectory(env.volumesDir, 'orders-backups'), 'orders', `${name}.dump`)));

    const db = await eventually(
      'status.lastBackup set',
      async () => {
        const current = await getOrUndefined<Db>(env.http, SAMPLEDBS, ns, 'orders');
        return current?.status?.lastBackup?.name ? current : undefined;
      },
      operator,
    );
    const scheduled = (db.status?.conditions as Condition[] | undefined)?.find(
      (c) => c.type === 'BackupScheduled',
    );
    assert.equal(scheduled?.status, 'True');
    assert.match(db.status?.lastBackup?.name ?? '', /^orders-\d{12}$/);
  });

  it('queues two on-demand backups, cleans up their Jobs, and retention removes the older dump and object', async () => {
    const ns = await env.namespace('retain');
    await env.http.create(SAMPLEDBS, {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDB',
      metadata: { name: 'orders', namespace: ns },
      spec: { version: '16', storage: { size: '1Gi' }, backup: { retention: { count: 1 } } },
    } as Db);
    const backup = (name: string) =>
      env.http.create(BACKUPS, {
        apiVersion: 'sampledb.io/v1alpha1',
        kind: 'SampleDBBackup',
        metadata: { name, namespace: ns },
        spec: { sampleDB: { name: 'orders' } },
      } as Backup);
    await backup('first');
    await backup('second');
    let firstCompletedAt: string | undefined;
    let secondStartedAt: string | undefined;
    await eventually(
      'both backups finished',
      async () => {
        const items = (await env.http.list<Backup>(BACKUPS, { namespace: ns })).items;
        const first = items.find((b) => b.metadata.name === 'first');
        const second = items.find((b) => b.metadata.name === 'second');
        firstCompletedAt ??= first?.status?.completedAt;
        secondStartedAt = second?.status?.startedAt;
        return second?.status?.phase === 'Completed' ? true : undefined;
      },
      operator,
      110_000,
    );
    assert.ok(firstCompletedAt && secondStartedAt, `${firstCompletedAt} ${secondStartedAt}`);
    // Queued: the second's Job started only once the first had finished (times in whole seconds).
    assert.ok(
      Date.parse(secondStartedAt) >= Date.parse(firstCompletedAt) - 1000,
      `${firstCompletedAt} ${secondStartedAt}`,
    );
    const dumps = join(claimDirectory(env.volumesDir, 'orders-backups'), 'orders');
    await eventually(
      'retention removed the first backup: its dump, then its object',
      async () => {
        const first = await getOrUndefined<Backup>(env.http, BACKUPS, ns, 'first');
        return !first && !existsSync(join(dumps, 'first.dump')) ? true : undefined;
      },
      operator,
      60_000,
    );
    assert.ok(existsSync(join(dumps, 'second.dump')), 'the newest Completed backup stays');
    assert.ok(!existsSync(join(dumps, 'first.dump.sha256')));
    await eventually(
      'the finished backup Jobs are gone (TTL 0 after the result is in the status)',
      async () => {
        const jobs = (await env.http.list<KubeObject>(JOBS, { namespace: ns })).items;
        return jobs.some((j) => j.metadata.name?.endsWith('-backup')) ? undefined : true;
      },
      operator,
      60_000,
    );
    const second = await getOrUndefined<Backup>(env.http, BACKUPS, ns, 'second');
    assert.equal(second?.status?.phase, 'Completed', 'the SampleDBBackup keeps the result');
  });
});
