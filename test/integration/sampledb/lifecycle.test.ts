// End to end: the operator as a real process (`node src/main.ts`, authenticated as its ServiceAccount with the RBAC
// from dist/) against a control plane with controllers, scheduler and kwok. Backup pods, and every pod of the
// "manual-*" namespaces, are run by the test as the kubelet would: the Jobs' real scripts against a real PostgreSQL.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type {
  V1Job,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Secret,
  V1Service,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type { SampleDbBackupObject, SampleDbObject, SampleDbSpec } from '../../../src/api/index.ts';
import type { KubeObject, ResourceType } from '../../../src/runtime/index.ts';
import { Gate, readyPodStatus } from '../support/kubelet.ts';
import type { OperatorProcess } from '../support/operator.ts';
import { claimDirectory, runScriptPod } from '../support/script-pod.ts';
import {
  BACKUPS,
  CONFIGMAPS,
  type E2eEnv,
  eventually,
  getOrUndefined,
  JOBS,
  MANUAL_PREFIX,
  PODS,
  PVCS,
  SAMPLEDBS,
  SECRETS,
  SERVICES,
  STATEFULSETS,
  startE2eEnv,
} from './e2e-env.ts';

type Db = SampleDbObject & KubeObject;
type Condition = { type: string; status: string; reason: string; message: string };

let env: E2eEnv;
let operator: OperatorProcess;
/** Backup pods wait for the gate of their SampleDB (open unless a test holds it). */
const backupGates = new Map<string, Gate>();
/** Pods of manual-* namespaces wait for the gate of their namespace + component. */
const manualGates = new Map<string, Gate>();
const gate = (map: Map<string, Gate>, key: string) => {
  let g = map.get(key);
  if (!g) {
    g = new Gate();
    map.set(key, g);
  }
  return g;
};
const openGate = () => {
  const g = new Gate();
  g.open();
  return g;
};

const label = (obj: KubeObject, key: string) => obj.metadata.labels?.[key];
const INSTANCE = 'app.kubernetes.io/instance';
const COMPONENT = 'app.kubernetes.io/component';

function sampleDb(namespace: string, name: string, spec: Partial<SampleDbSpec> = {}): Db {
  return {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name, namespace },
    spec: { version: '16', storage: { size: '1Gi' }, ...spec },
  } as Db;
}

const getDb = (ns: string, name: string) => getOrUndefined<Db>(env.http, SAMPLEDBS, ns, name);
const condition = (db: Db | undefined, type: string) =>
  (db?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);

async function waitReady(ns: string, name: string, timeoutMs = 60_000): Promise<Db> {
  return eventually(
    `SampleDB ${ns}/${name} Ready`,
    async () => {
      const db = await getDb(ns, name);
      const ready = condition(db, 'Ready');
      return db?.status?.phase === 'Ready' &&
        ready?.status === 'True' &&
        db.status.observedGeneration === db.metadata.generation
        ? db
        : undefined;
    },
    operator,
    timeoutMs,
  );
}

async function waitGone(ns: string, name: string, timeoutMs = 60_000): Promise<void> {
  await eventually(
    `SampleDB ${ns}/${name} gone`,
    async () => ((await getDb(ns, name)) ? undefined : true),
    operator,
    timeoutMs,
  );
}

/** Records, from watches, when each PVC started being deleted and when each backup reached a terminal phase. */
class Timeline {
  readonly events: Array<{ at: number; what: string }> = [];
  readonly #stop = new AbortController();

  constructor(namespace: string) {
    void this.#watch(PVCS, namespace, (type, o) => {
      if (type === 'DELETED' || o.metadata.deletionTimestamp) return `pvc-deleted:${o.metadata.name}`;
      return undefined;
    });
    void this.#watch(BACKUPS, namespace, (_type, o) => {
      const phase = (o as SampleDbBackupObject).status?.phase;
      return phase === 'Completed' || phase === 'Failed' ? `backup-${phase}:${o.metadata.name}` : undefined;
    });
  }

  first(prefix: string): number | undefined {
    return this.events.find((e) => e.what.startsWith(prefix))?.at;
  }

  has(prefix: string): boolean {
    return this.first(prefix) !== undefined;
  }

  stop(): void {
    this.#stop.abort();
  }

  async #watch(
    rt: ResourceType,
    namespace: string,
    describe: (type: string, o: KubeObject) => string | undefined,
  ): Promise<void> {
    try {
      const stream = await env.http.watch<KubeObject>(rt, {
        namespace,
        signal: this.#stop.signal,
        timeoutSeconds: 300,
      });
      for await (const event of stream) {
        const what = describe(event.type, event.object);
        if (what && !this.events.some((e) => e.what === what))
          this.events.push({ at: performance.now(), what });
      }
    } catch {
      // Aborted at the end of the test.
    }
  }
}

before(async () => {
  env = await startE2eEnv();
  env.pg.query('CREATE DATABASE app');
  env.pg.query(
    'CREATE TABLE orders (id int PRIMARY KEY, item text); INSERT INTO orders VALUES (1, $$tea$$), (2, $$cake$$)',
    'app',
  );

  // Backup pods: the real backup script, pg_dump to the claim's directory, result as the termination message.
  env.kubelet.on(
    (pod) => label(pod, COMPONENT) === 'backup',
    async (pod, kubelet) => {
      await (backupGates.get(label(pod, INSTANCE) ?? '') ?? openGate()).wait();
      const result = await runScriptPod(pod, kubelet.http, env.pg, env.volumesDir);
      await kubelet.finish(pod, result.code ?? 1, result.message);
    },
  );
  // Manual namespaces: the database pod becomes ready when the test says so; Job pods run their real script.
  env.kubelet.on(
    (pod) => (pod.metadata.namespace ?? '').startsWith(MANUAL_PREFIX),
    async (pod, kubelet) => {
      const component = label(pod, COMPONENT) ?? '';
      await gate(manualGates, `${pod.metadata.namespace}/${component}`).wait();
      if (component === 'database') return kubelet.markReady(pod);
      const result = await runScriptPod(pod, kubelet.http, env.pg, env.volumesDir);
      await kubelet.finish(pod, result.code ?? 1, result.message);
    },
  );
  operator = env.startOperator();
});

after(async () => {
  // A test that failed while holding a pod must not leave its handler waiting.
  for (const g of [...backupGates.values(), ...manualGates.values()]) g.open();
  await env?.stop();
});

describe('SampleDB lifecycle (operator process, ServiceAccount RBAC, kwok)', { concurrency: false }, () => {
  let ns: string;

  it('creates every child and becomes Ready, with an honest status', async () => {
    ns = await env.namespace('e2e');
    await env.http.create(SAMPLEDBS, sampleDb(ns, 'orders', { service: { port: 5432, type: 'ClusterIP' } }));
    const db = await waitReady(ns, 'orders');
    const uid = db.metadata.uid;
    assert.ok(db.metadata.finalizers?.includes('sampledb.io/finalizer'));
    assert.equal(db.status?.endpoint, `orders.${ns}.svc:5432`);
    assert.equal(db.status?.binding?.name, 'orders-binding');
    for (const type of ['Provisioned', 'Initialized', 'Configured', 'StorageResized'])
      assert.equal(condition(db, type)?.status, 'True', type);

    const sts = await env.http.get<V1StatefulSet & KubeObject>(STATEFULSETS, {
      namespace: ns,
      name: 'orders',
    });
    assert.equal(sts.spec?.template.spec?.containers[0]?.image, 'docker.io/library/postgres:16');
    assert.equal(sts.status?.readyReplicas, 1);
    const owned = (o: KubeObject) =>
      o.metadata.ownerReferences?.some((r) => r.uid === uid && r.controller === true);
    assert.ok(owned(sts));
    const headless = await env.http.get<V1Service & KubeObject>(SERVICES, {
      namespace: ns,
      name: 'orders-headless',
    });
    assert.equal(headless.spec?.clusterIP, 'None');
    const client = await env.http.get<V1Service & KubeObject>(SERVICES, { namespace: ns, name: 'orders' });
    assert.equal(client.spec?.ports?.[0]?.port, 5432);
    const credentials = await env.http.get<V1Secret & KubeObject>(SECRETS, {
      namespace: ns,
      name: 'orders-credentials',
    });
    const password = Buffer.from(credentials.data?.password ?? '', 'base64').toString();
    assert.equal(password.length, 40);
    const binding = await env.http.get<V1Secret & KubeObject>(SECRETS, {
      namespace: ns,
      name: 'orders-binding',
    });
    assert.equal(Buffer.from(binding.data?.password ?? '', 'base64').toString(), password);
    const connection = await env.http.get<{ data?: Record<string, string> } & KubeObject>(CONFIGMAPS, {
      namespace: ns,
      name: 'orders-connection',
    });
    assert.equal(connection.data?.host, `orders.${ns}.svc`);
    assert.ok(
      !Object.values(connection.data ?? {}).some((v) => v.includes(password)),
      'no password in the ConfigMap',
    );
    const job = await env.http.get<V1Job & KubeObject>(JOBS, { namespace: ns, name: 'orders-init' });
    assert.equal(job.status?.succeeded, 1);
    for (const o of [headless, client, credentials, binding, connection, job])
      assert.ok(owned(o), o.metadata.name);
    const pvc = await env.http.get<V1PersistentVolumeClaim & KubeObject>(PVCS, {
      namespace: ns,
      name: 'data-orders-0',
    });
    assert.equal(pvc.spec?.resources?.requests?.storage, '1Gi');
    for (const o of [sts, headless, client, credentials, binding, connection, job])
      assert.equal(label(o, 'app.kubernetes.io/managed-by'), 'sampledb-operator');
  });

  it('is not Ready before the database pod is ready and the init Job (the real script) has succeeded', async () => {
    const mns = await env.namespace(`${MANUAL_PREFIX}honest`);
    await env.http.create(
      SAMPLEDBS,
      sampleDb(mns, 'ledger', { bootstrap: { database: 'ledger', owner: 'ledger' } }),
    );
    await eventually('pod ledger-0 exists', () => getOrUndefined(env.http, PODS, mns, 'ledger-0'), operator);
    const waiting = await eventually(
      'status Provisioning',
      async () => {
        const db = await getDb(mns, 'ledger');
        return db?.status?.phase === 'Provisioning' && condition(db, 'Provisioned')?.reason === 'PodNotReady'
          ? db
          : undefined;
      },
      operator,
    );
    assert.equal(condition(waiting, 'Ready')?.status, 'False');
    assert.equal(condition(waiting, 'Provisioned')?.reason, 'PodNotReady');
    assert.equal(
      await getOrUndefined(env.http, JOBS, mns, 'ledger-init'),
      undefined,
      'no init Job before the database container runs (this pod has not started)',
    );

    gate(manualGates, `${mns}/database`).open();
    const initializing = await eventually(
      'Provisioned, init Job running',
      async () => {
        const db = await getDb(mns, 'ledger');
        return condition(db, 'Provisioned')?.status === 'True' &&
          condition(db, 'Initialized')?.reason === 'Initializing'
          ? db
          : undefined;
      },
      operator,
    );
    assert.equal(condition(initializing, 'Ready')?.status, 'False');
    assert.notEqual(initializing.status?.phase, 'Ready');

    gate(manualGates, `${mns}/init`).open();
    await waitReady(mns, 'ledger');
    // The init script really ran: the owner role and the database exist on the server.
    assert.equal(env.pg.query("SELECT count(*) FROM pg_database WHERE datname = 'ledger'"), '1');
    assert.equal(env.pg.query("SELECT count(*) FROM pg_roles WHERE rolname = 'ledger'"), '1');
  });

  it('is not Ready while the client Service does not route to the ready pod (its EndpointSlice lacks it)', async () => {
    const mns = await env.namespace(`${MANUAL_PREFIX}routing`);
    gate(manualGates, `${mns}/init`).open();
    await env.http.create(SAMPLEDBS, sampleDb(mns, 'till'));
    const pod = await eventually(
      'pod till-0 exists',
      () => getOrUndefined<V1Pod & KubeObject>(env.http, PODS, mns, 'till-0'),
      operator,
    );
    // Ready and running, but without a pod IP: the EndpointSlice controller leaves such a pod out of the Service,
    // as it lags a pod that has just turned Ready on a real node.
    await env.http.patch(PODS, { namespace: mns, name: 'till-0' }, { status: readyPodStatus(pod) }, 'merge', {
      subresource: 'status',
    });
    const unrouted = await eventually(
      'Provisioned False with ServiceNotRouting',
      async () => {
        const db = await getDb(mns, 'till');
        return condition(db, 'Provisioned')?.reason === 'ServiceNotRouting' ? db : undefined;
      },
      operator,
    );
    assert.equal(condition(unrouted, 'Provisioned')?.status, 'False');
    assert.match(condition(unrouted, 'Provisioned')?.message ?? '', /Service till does not route to it yet/);
    assert.equal(condition(unrouted, 'Ready')?.status, 'False');
    const sts = await env.http.get<V1StatefulSet & KubeObject>(STATEFULSETS, {
      namespace: mns,
      name: 'till',
    });
    assert.equal(sts.status?.readyReplicas, 1, 'the pod itself counts as ready');

    // The fake kubelet's readiness gives the pod its IP: the slice lists it, and the SampleDB turns Ready. Called
    // here, not through the gate: the kubelet takes only Pending pods, and this one may have left Pending before its
    // poll saw it. The gate is opened too, so a handler that did take it finishes (the same status again).
    await env.kubelet.markReady(pod);
    gate(manualGates, `${mns}/database`).open();
    const ready = await waitReady(mns, 'till');
    assert.equal(condition(ready, 'Provisioned')?.reason, 'DatabaseReady');
  });

  it('rolls out edits: resources restart the pod, the service port and storage size follow', async () => {
    const before = await env.http.get<V1StatefulSet & KubeObject>(STATEFULSETS, {
      namespace: ns,
      name: 'orders',
    });
    const hashBefore = before.spec?.template.metadata?.annotations?.['sampledb.io/config-hash'];
    await env.http.patch(
      SAMPLEDBS,
      { namespace: ns, name: 'orders' },
      {
        spec: { resources: { limits: { memory: '2Gi' } }, service: { port: 6543 }, storage: { size: '2Gi' } },
      },
      'merge',
    );
    const sts = await eventually(
      'new pod template rolled out',
      async () => {
        const s = await env.http.get<V1StatefulSet & KubeObject>(STATEFULSETS, {
          namespace: ns,
          name: 'orders',
        });
        const hash = s.spec?.template.metadata?.annotations?.['sampledb.io/config-hash'];
        return hash !== hashBefore &&
          s.status?.updateRevision === s.status?.currentRevision &&
          s.status?.readyReplicas === 1
          ? s
          : undefined;
      },
      operator,
    );
    assert.notEqual(sts.status?.updateRevision, before.status?.updateRevision);
    assert.equal(sts.spec?.template.spec?.containers[0]?.resources?.limits?.memory, '2Gi');
    const pod = await env.http.get<KubeObject>(PODS, { namespace: ns, name: 'orders-0' });
    assert.equal(
      label(pod, 'controller-revision-hash'),
      sts.status?.updateRevision,
      'the pod runs the new revision',
    );
    const client = await env.http.get<V1Service & KubeObject>(SERVICES, { namespace: ns, name: 'orders' });
    assert.equal(client.spec?.ports?.[0]?.port, 6543);
    const db = await eventually(
      'Ready at generation 2 with the volume grown',
      async () => {
        const d = await waitReady(ns, 'orders');
        return condition(d, 'StorageResized')?.status === 'True' ? d : undefined;
      },
      operator,
    );
    assert.equal(db.status?.endpoint, `orders.${ns}.svc:6543`);
    const pvc = await env.http.get<V1PersistentVolumeClaim & KubeObject>(PVCS, {
      namespace: ns,
      name: 'data-orders-0',
    });
    assert.equal(pvc.spec?.resources?.requests?.storage, '2Gi');
    assert.equal(pvc.status?.capacity?.storage, '2Gi');
  });

  it('Snapshot policy without a snapshot API: a final pg_dump completes before the StatefulSet and the PVCs go', async () => {
    const timeline = new Timeline(ns);
    const hold = gate(backupGates, 'orders');
    await env.http.delete(SAMPLEDBS, { namespace: ns, name: 'orders' });
    await eventually(
      'final backup pod running',
      async () => {
        const pods = await env.http.list<KubeObject>(PODS, {
          namespace: ns,
          labelSelector: `${COMPONENT}=backup`,
        });
        return pods.items[0];
      },
      operator,
    );
    // The status write can land after the Job controller has made the pod: wait for it rather than race it.
    const deleting = await eventually(
      'status says Deleting',
      async () => {
        const d = await getDb(ns, 'orders');
        return d?.status?.phase === 'Deleting' ? d : undefined;
      },
      operator,
    );
    assert.equal(deleting?.status?.phase, 'Deleting');
    assert.equal(condition(deleting, 'DeletionProtected')?.status, 'False');
    // While the backup runs, nothing that holds data is touched.
    assert.ok(
      await getOrUndefined(env.http, STATEFULSETS, ns, 'orders'),
      'StatefulSet kept during the backup',
    );
    assert.ok(!timeline.has('pvc-deleted:'), 'no PVC deleted during the backup');
    const releasedAt = performance.now();
    hold.open();
    await waitGone(ns, 'orders');
    timeline.stop();

    const backups = (await env.http.list<SampleDbBackupObject & KubeObject>(BACKUPS, { namespace: ns }))
      .items;
    assert.equal(backups.length, 1, 'exactly one final backup');
    const backup = backups[0] as SampleDbBackupObject;
    assert.equal(backup.status?.phase, 'Completed');
    assert.equal(backup.metadata.ownerReferences, undefined, 'the record outlives the SampleDB');
    // The checksum the operator reports is the one of the dump the script wrote on the backup volume.
    const dump = join(
      claimDirectory(env.volumesDir, 'orders-backups'),
      'orders',
      `${backup.metadata.name}.dump`,
    );
    assert.equal(
      backup.status?.checksum,
      `sha256:${createHash('sha256').update(readFileSync(dump)).digest('hex')}`,
    );
    assert.equal(backup.status?.location, `pvc://orders-backups/orders/${backup.metadata.name}.dump`);
    assert.equal(backup.status?.sizeBytes, readFileSync(dump).length);

    const completed = timeline.first('backup-Completed:');
    const pvcDeleted = timeline.first('pvc-deleted:data-orders-0');
    assert.ok(completed !== undefined && pvcDeleted !== undefined, JSON.stringify(timeline.events));
    assert.ok(completed > releasedAt && completed <= pvcDeleted, JSON.stringify(timeline.events));
    await eventually('data PVC gone', async () =>
      (await getOrUndefined(env.http, PVCS, ns, 'data-orders-0')) ? undefined : true,
    );
    assert.equal(await getOrUndefined(env.http, STATEFULSETS, ns, 'orders'), undefined);
    assert.ok(
      await getOrUndefined(env.http, PVCS, ns, 'orders-backups'),
      'the backups PVC (with the dump) is kept',
    );
  });

  it('Delete policy removes everything, the backups PVC included', async () => {
    await env.http.create(
      SAMPLEDBS,
      sampleDb(ns, 'scratch', { deletion: { policy: 'Delete' }, backup: { volume: { size: '1Gi' } } }),
    );
    await waitReady(ns, 'scratch');
    assert.ok(await getOrUndefined(env.http, PVCS, ns, 'scratch-backups'));
    await env.http.delete(SAMPLEDBS, { namespace: ns, name: 'scratch' });
    await waitGone(ns, 'scratch');
    await eventually('PVCs gone', async () => {
      const pvcs = await env.http.list<KubeObject>(PVCS, {
        namespace: ns,
        labelSelector: `${INSTANCE}=scratch`,
      });
      return pvcs.items.length === 0 ? true : undefined;
    });
    assert.equal(await getOrUndefined(env.http, STATEFULSETS, ns, 'scratch'), undefined);
    const backups = await env.http.list<SampleDbBackupObject & KubeObject>(BACKUPS, { namespace: ns });
    assert.ok(!backups.items.some((b) => b.spec.sampleDB.name === 'scratch'), 'no final backup under Delete');
  });

  it('Retain policy removes the workload and keeps the data PVC, labelled orphaned', async () => {
    await env.http.create(SAMPLEDBS, sampleDb(ns, 'keep', { deletion: { policy: 'Retain' } }));
    await waitReady(ns, 'keep');
    await env.http.delete(SAMPLEDBS, { namespace: ns, name: 'keep' });
    await waitGone(ns, 'keep');
    assert.equal(await getOrUndefined(env.http, STATEFULSETS, ns, 'keep'), undefined);
    const pvc = await getOrUndefined<KubeObject>(env.http, PVCS, ns, 'data-keep-0');
    assert.ok(pvc && !pvc.metadata.deletionTimestamp, 'data PVC kept');
    assert.equal(label(pvc, 'sampledb.io/orphaned'), 'true');
  });

  it('refuses to delete a protected SampleDB (admission policy from dist/) until protection is lifted', async () => {
    await env.http.create(
      SAMPLEDBS,
      sampleDb(ns, 'guarded', { deletion: { policy: 'Delete', protection: true } }),
    );
    await waitReady(ns, 'guarded');
    await assert.rejects(
      env.kubectl(['delete', 'sampledb', 'guarded', '-n', ns, '--wait=false']),
      (err: Error) => {
        assert.match(err.message, /is protected \(spec\.deletion\.protection: true\)/);
        assert.match(err.message, /kubectl patch sampledb guarded/);
        return true;
      },
    );
    assert.ok(!(await getDb(ns, 'guarded'))?.metadata.deletionTimestamp);
    await env.http.patch(
      SAMPLEDBS,
      { namespace: ns, name: 'guarded' },
      { spec: { deletion: { protection: false } } },
      'merge',
    );
    await env.kubectl(['delete', 'sampledb', 'guarded', '-n', ns, '--wait=false']);
    await waitGone(ns, 'guarded');
  });

  it('resumes a deletion after the operator is SIGKILLed mid-backup, without a second backup', async () => {
    await env.http.create(SAMPLEDBS, sampleDb(ns, 'resume'));
    await waitReady(ns, 'resume');
    const timeline = new Timeline(ns);
    const hold = gate(backupGates, 'resume');
    await env.http.delete(SAMPLEDBS, { namespace: ns, name: 'resume' });
    await eventually(
      'final backup Job created',
      async () => {
        const jobs = await env.http.list<KubeObject>(JOBS, {
          namespace: ns,
          labelSelector: `${INSTANCE}=resume,${COMPONENT}=backup`,
        });
        return jobs.items[0];
      },
      operator,
    );
    await operator.kill();
    assert.ok(await getOrUndefined(env.http, PVCS, ns, 'data-resume-0'));
    operator = env.startOperator();
    hold.open();
    await waitGone(ns, 'resume');
    timeline.stop();
    const finals = (
      await env.http.list<SampleDbBackupObject & KubeObject>(BACKUPS, { namespace: ns })
    ).items.filter((b) => b.spec.sampleDB.name === 'resume');
    assert.equal(finals.length, 1, 'one final backup, not a second one after the restart');
    assert.equal(finals[0]?.status?.phase, 'Completed');
    const completed = timeline.first('backup-Completed:');
    const pvcDeleted = timeline.first('pvc-deleted:data-resume-0');
    assert.ok(
      completed !== undefined && pvcDeleted !== undefined && completed <= pvcDeleted,
      JSON.stringify(timeline.events),
    );
  });

  it('shows Failed with the init Job reason and the script error, and recovers once fixed', async () => {
    const mns = await env.namespace(`${MANUAL_PREFIX}broken`);
    gate(manualGates, `${mns}/database`).open();
    gate(manualGates, `${mns}/init`).open();
    await env.http.create(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'bootstrap', namespace: mns },
      data: { 'init.sql': 'CREATE TABLE broken (id int;' },
    } as KubeObject);
    await env.http.create(
      SAMPLEDBS,
      sampleDb(mns, 'shop', {
        bootstrap: { database: 'shop', owner: 'shop', initSQL: { name: 'bootstrap' } },
      }),
    );
    const failed = await eventually(
      'phase Failed',
      async () => {
        const db = await getDb(mns, 'shop');
        return db?.status?.phase === 'Failed' ? db : undefined;
      },
      operator,
      180_000,
    );
    const initialized = condition(failed, 'Initialized');
    assert.equal(initialized?.reason, 'InitJobFailed');
    assert.match(initialized?.message ?? '', /BackoffLimitExceeded/);
    assert.match(initialized?.message ?? '', /syntax error/);
    assert.equal(condition(failed, 'Ready')?.status, 'False');

    // The fix the condition asks for: correct the SQL, delete the Job.
    await env.http.patch(
      CONFIGMAPS,
      { namespace: mns, name: 'bootstrap' },
      { data: { 'init.sql': 'CREATE TABLE fixed (id int);' } },
      'merge',
    );
    await env.http.delete(JOBS, { namespace: mns, name: 'shop-init' }, { propagationPolicy: 'Background' });
    await waitReady(mns, 'shop', 90_000);
    assert.equal(env.pg.query("SELECT count(*) FROM pg_tables WHERE tablename = 'fixed'", 'shop'), '1');
  });

  it('stops gracefully on SIGTERM with exit code 0', async () => {
    const exit = await operator.stop();
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(operator.logs().some((l) => l.msg === 'sampledb-operator stopped'));
    assert.deepEqual(env.kubelet.errors, []);
  });
});
