// Backups cannot fill a disk or pile up, on a real apiserver with the operator as a process: retention removes what
// `count` allows (the dump and the object) with a BackupPruned Event; a backup the backup volume has no room for
// grows the operator's claim first when its StorageClass expands, and fails saying how much it needs when it does
// not. The FakeKubelet runs the backup pods with the real backup script against a real PostgreSQL.
//
// How the volume is made full: the operator counts what is free as the claim's capacity less the sizes the Completed
// SampleDBBackups on it recorded, so the test records a "ballast" backup (of a SampleDB that does not exist, so
// nothing reconciles it) as large as the volume. Lowering the claim's reported capacity instead raced the envtest
// volume binder, which plays the resizer and writes the capacity back to the request.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseQuantity, type SampleDbBackupObject, type SampleDbObject } from '../../../src/api/index.ts';
import { EVENTS, JOBS, type KubeObject, STORAGE_CLASSES } from '../../../src/runtime/index.ts';
import type { OperatorProcess } from '../support/operator.ts';
import { claimDirectory, runScriptPod } from '../support/script-pod.ts';
import { BACKUPS, type E2eEnv, eventually, getOrUndefined, PVCS, SAMPLEDBS, startE2eEnv } from './e2e-env.ts';

type Db = SampleDbObject & KubeObject;
type Backup = SampleDbBackupObject & KubeObject;
type Event = KubeObject & { reason?: string; note?: string; type?: string; regarding?: { name?: string } };
type Condition = { type: string; status: string; reason: string; message: string };

let env: E2eEnv;
let operator: OperatorProcess;

before(async () => {
  env = await startE2eEnv();
  env.pg.query('CREATE DATABASE app');
  env.pg.query('CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders VALUES (1), (2)', 'app');
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

const createBackup = (ns: string, name: string) =>
  env.http.create(BACKUPS, {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDBBackup',
    metadata: { name, namespace: ns },
    spec: { sampleDB: { name: 'orders' } },
  } as Backup);

const finished = (ns: string, name: string) =>
  eventually(
    `backup ${name} finished`,
    async () => {
      const b = await getOrUndefined<Backup>(env.http, BACKUPS, ns, name);
      return b?.status?.phase === 'Completed' || b?.status?.phase === 'Failed' ? b : undefined;
    },
    operator,
    90_000,
  );

const eventOn = (ns: string, name: string, reason: string) =>
  eventually(
    `a ${reason} Event on ${name}`,
    async () =>
      (await env.http.list<Event>(EVENTS, { namespace: ns })).items.find(
        (e) => e.reason === reason && e.regarding?.name === name,
      ),
    operator,
  );

type Claim = KubeObject & {
  spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
  status?: { capacity?: { storage?: string } };
};

/** The bound claim's capacity in bytes, once the volume binder has bound it. */
const claimCapacity = (ref: { namespace: string; name: string }) =>
  eventually(
    `claim ${ref.name} bound with a capacity`,
    async () => {
      const storage = (await getOrUndefined<Claim>(env.http, PVCS, ref.namespace, ref.name))?.status?.capacity
        ?.storage;
      return storage ? parseQuantity(storage) : undefined;
    },
    operator,
  );

/** A Completed backup of a SampleDB that does not exist, recording `sizeBytes` on the claim. */
async function ballast(ns: string, claimName: string, sizeBytes: number): Promise<void> {
  const ref = { namespace: ns, name: 'ballast' };
  await env.http.create(BACKUPS, {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDBBackup',
    metadata: ref,
    spec: { sampleDB: { name: 'elsewhere' } },
  } as Backup);
  await env.http.patch(
    BACKUPS,
    ref,
    {
      status: {
        phase: 'Completed',
        completedAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        sizeBytes,
        location: `pvc://${claimName}/elsewhere/ballast.dump`,
      },
    },
    'merge',
    { subresource: 'status' },
  );
}

describe('backups cannot fill a disk or pile up (operator process, ServiceAccount RBAC)', () => {
  it('prunes past retention.count with an Event; a backup the full volume has no room for runs after the operator grew its claim', async () => {
    const ns = await env.namespace('space');
    await env.http.create(SAMPLEDBS, {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDB',
      metadata: { name: 'orders', namespace: ns },
      spec: { version: '16', storage: { size: '1Gi' }, backup: { retention: { count: 1 } } },
    } as Db);

    await createBackup(ns, 'first');
    assert.equal((await finished(ns, 'first')).status?.phase, 'Completed');
    await createBackup(ns, 'second');
    const second = await finished(ns, 'second');
    assert.equal(second.status?.phase, 'Completed');
    const size = second.status?.sizeBytes ?? 0;
    assert.ok(size > 0, JSON.stringify(second.status));

    // Retention: count 1 keeps only the newest Completed backup; the older dump and object go, each with an Event.
    const dumps = join(claimDirectory(env.volumesDir, 'orders-backups'), 'orders');
    await eventually(
      'retention removed the first backup: its dump and its object',
      async () =>
        !(await getOrUndefined<Backup>(env.http, BACKUPS, ns, 'first')) &&
        !existsSync(join(dumps, 'first.dump'))
          ? true
          : undefined,
      operator,
    );
    const pruned = await eventOn(ns, 'orders', 'BackupPruned');
    assert.match(pruned.note ?? '', /first/);
    assert.ok(existsSync(join(dumps, 'second.dump')), 'the newest Completed backup stays');

    // The volume is full: the ballast records as much as the volume holds. Its class (the default) expands, so the
    // operator asks for room for the kept dumps and two more, in whole GiB, and the backup runs once it is there.
    const claimRef = { namespace: ns, name: 'orders-backups' };
    const capacity = await claimCapacity(claimRef);
    await ballast(ns, 'orders-backups', capacity);
    await createBackup(ns, 'third');
    const third = await finished(ns, 'third');
    assert.equal(third.status?.phase, 'Completed', JSON.stringify(third.status));
    const needed = Math.ceil(size * 1.2);
    const expected = `${Math.ceil((capacity + size + 2 * needed) / 2 ** 30)}Gi`;
    const claim = await env.http.get<Claim>(PVCS, claimRef);
    // Failed in 2 of 6 runs under load (2026-12-06: the claim stayed 2Gi and the backup still completed) and not
    // yet explained, so a failure says what the backup and the operator saw.
    assert.equal(
      claim.spec?.resources?.requests?.storage,
      expected,
      `the operator grew its backup claim (capacity ${capacity}, last dump ${size} B; third: ${JSON.stringify(third.status)})\n${operator.tail(40)}`,
    );
    assert.equal(claim.status?.capacity?.storage, expected, 'the backup ran once the volume had grown');
  });

  it('a full backup volume whose class cannot expand fails the backup with BackupVolumeFull, saying how much it needs; no Job', async () => {
    const ns = await env.namespace('full');
    await env.http.create(STORAGE_CLASSES, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: `fixed-${ns}` },
      provisioner: 'envtest.local/hostpath',
      allowVolumeExpansion: false,
    } as KubeObject);
    await env.http.create(SAMPLEDBS, {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDB',
      metadata: { name: 'orders', namespace: ns },
      spec: {
        version: '16',
        storage: { size: '1Gi' },
        backup: { volume: { size: '1Gi', storageClassName: `fixed-${ns}` } },
      },
    } as Db);
    await createBackup(ns, 'first');
    assert.equal((await finished(ns, 'first')).status?.phase, 'Completed');
    const claimRef = { namespace: ns, name: 'orders-backups' };
    const capacity = await claimCapacity(claimRef);
    await ballast(ns, 'orders-backups', capacity);

    await createBackup(ns, 'second');
    const second = await finished(ns, 'second');
    assert.equal(second.status?.phase, 'Failed');
    const failed = (second.status?.conditions as Condition[] | undefined)?.find((c) => c.status === 'False');
    assert.equal(failed?.reason, 'BackupVolumeFull', JSON.stringify(second.status));
    assert.match(
      failed?.message ?? '',
      /The backup volume orders-backups has about 0 MiB free of 1Gi; this backup needs about \d+ MiB/,
    );
    assert.match(failed?.message ?? '', /does not allow expansion/);
    const jobs = await env.http.list<KubeObject>(JOBS, { namespace: ns });
    assert.ok(
      !jobs.items.some((j) => j.metadata?.name?.includes('second')),
      `no backup Job for the refused backup: ${jobs.items.map((j) => j.metadata?.name).join(', ')}`,
    );
    const claim = await env.http.get<Claim>(PVCS, claimRef);
    assert.equal(
      claim.spec?.resources?.requests?.storage,
      '1Gi',
      'a class that cannot expand is not asked to',
    );
  });
});
