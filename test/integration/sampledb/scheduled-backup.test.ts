// End to end: a SampleDB with spec.backup.schedule gets SampleDBBackups from the operator process on that schedule,
// run by the real backup script against a real PostgreSQL (the FakeKubelet runs the backup pods).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SampleDbBackupObject, SampleDbObject } from '../../../src/api/index.ts';
import type { KubeObject } from '../../../src/runtime/index.ts';
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
});
