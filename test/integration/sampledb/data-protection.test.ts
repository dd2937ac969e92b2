// The data-protection finalizer and the Retain fallback on a real apiserver (kwok node): the operator as a process with
// the RBAC from dist/. Deleting the namespace, deleting a claim by hand, a final backup that cannot succeed, and a
// SampleDB removed without its deletion: the data is either protected or kept on a PersistentVolume with
// reclaimPolicy Retain (labelled, annotated, an Event in `default`), and no claim is left held by us forever.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { SampleDbBackupObject, SampleDbObject } from '../../../src/api/index.ts';
import { EVENTS, type KubeObject, NAMESPACES, PERSISTENT_VOLUMES } from '../../../src/runtime/index.ts';
import type { OperatorProcess } from '../support/operator.ts';
import { BACKUPS, type E2eEnv, eventually, getOrUndefined, PVCS, SAMPLEDBS, startE2eEnv } from './e2e-env.ts';

type Db = SampleDbObject & KubeObject;
type Pvc = V1PersistentVolumeClaim & KubeObject;
type Pv = V1PersistentVolume & KubeObject;
type Condition = { type: string; status: string; reason: string; message: string };

const DATA_FINALIZER = 'sampledb.io/data-protection';
const COMPONENT = 'app.kubernetes.io/component';

let env: E2eEnv;
let operator: OperatorProcess;

before(async () => {
  env = await startE2eEnv();
  // Backup pods end the way kwok's own stages end every Job pod: Succeeded, with no termination message. That is the
  // run of 40 deletions that started two final-backup Jobs per SampleDB (NoResult, retried after 30 s).
  env.kubelet.on(
    (pod) => pod.metadata.labels?.[COMPONENT] === 'backup',
    (pod, kubelet) => kubelet.finish(pod, 0, ''),
  );
  operator = env.startOperator();
});

after(async () => {
  await env?.stop();
});

function sampleDb(namespace: string, name: string, policy = 'Snapshot'): Db {
  return {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name, namespace },
    spec: { version: '16', storage: { size: '1Gi' }, deletion: { policy } },
  } as Db;
}

const condition = (db: Db | undefined, type: string) =>
  (db?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);

/** Ready, with its data claim held by our finalizer and bound: returns the claim's PersistentVolume name. */
async function readyAndHeld(ns: string, name: string): Promise<string> {
  await eventually(
    `SampleDB ${ns}/${name} Ready`,
    async () => {
      const db = await getOrUndefined<Db>(env.http, SAMPLEDBS, ns, name);
      return db?.status?.phase === 'Ready' ? db : undefined;
    },
    operator,
  );
  const pvc = await eventually(
    `data-${name}-0 held and bound`,
    async () => {
      const claim = await getOrUndefined<Pvc>(env.http, PVCS, ns, `data-${name}-0`);
      return claim?.metadata.finalizers?.includes(DATA_FINALIZER) && claim.spec?.volumeName
        ? claim
        : undefined;
    },
    operator,
  );
  return pvc.spec?.volumeName ?? '';
}

/** `cause`: the retained-because annotation it must have (a pattern where the order of events decides). */
async function retainedVolume(pvName: string, cause: RegExp): Promise<Pv> {
  return eventually(
    `PersistentVolume ${pvName} switched to Retain (${cause})`,
    async () => {
      const pv = await getOrUndefined<Pv>(env.http, PERSISTENT_VOLUMES, '', pvName);
      return pv?.spec?.persistentVolumeReclaimPolicy === 'Retain' &&
        cause.test(pv.metadata.annotations?.['sampledb.io/retained-because'] ?? '')
        ? pv
        : undefined;
    },
    operator,
  );
}

/** The VolumeRetained Event on the PersistentVolume: cluster-scoped, so in `default`, where it outlives the namespace. */
async function volumeEvent(pvName: string): Promise<KubeObject & { note?: string; reason?: string }> {
  return eventually(
    `VolumeRetained Event on ${pvName} in default`,
    async () => {
      const events = await env.http.list<KubeObject & { regarding?: { name?: string }; reason?: string }>(
        EVENTS,
        { namespace: 'default' },
      );
      return events.items.find((e) => e.regarding?.name === pvName && e.reason === 'VolumeRetained');
    },
    operator,
  );
}

/** Every version of the SampleDB the watch sees, so a status written just before it goes is not missed. */
function recordConditions(ns: string, name: string): { seen: Condition[]; stop: () => void } {
  const seen: Condition[] = [];
  const stop = new AbortController();
  void (async () => {
    try {
      const stream = await env.http.watch<Db>(SAMPLEDBS, {
        namespace: ns,
        signal: stop.signal,
        timeoutSeconds: 120,
      });
      for await (const event of stream) {
        if (event.object.metadata.name !== name) continue;
        const c = condition(event.object, 'DeletionProtected');
        if (c) seen.push(c);
      }
    } catch {
      // Aborted at the end of the test.
    }
  })();
  return { seen, stop: () => stop.abort() };
}

describe('data protection: held claims and the Retain fallback (operator process, kwok)', {
  concurrency: false,
}, () => {
  it('deleting the namespace: the PV is switched to Retain before the claim is released, said in an Event and the status', async () => {
    const ns = await env.namespace('nsdel');
    await env.http.create(SAMPLEDBS, sampleDb(ns, 'orders'));
    const pvName = await readyAndHeld(ns, 'orders');
    const record = recordConditions(ns, 'orders');
    await env.http.delete(NAMESPACES, { namespace: '', name: ns });
    await eventually(
      `namespace ${ns} gone`,
      async () => ((await getOrUndefined(env.http, NAMESPACES, '', ns)) ? undefined : true),
      operator,
      120_000,
    );
    record.stop();
    // Which the operator meets first decides the cause: the claim deleted while the SampleDB still lived (the
    // namespace controller deletes claims and SampleDBs in no fixed order), the refused backup, or the StatefulSet
    // already gone.
    const pv = await retainedVolume(pvName, /^(ClaimDeleting|NamespaceTerminating|WorkloadGone)$/);
    assert.equal(pv.metadata.labels?.['sampledb.io/retained'], 'true');
    assert.equal(pv.metadata.annotations?.['sampledb.io/retained-from'], `${ns}/orders`);
    // Released, not deleted: the data is on it, and the claim it names is gone.
    await eventually('PV Released', async () => {
      const now = await getOrUndefined<Pv>(env.http, PERSISTENT_VOLUMES, '', pvName);
      return now?.status?.phase === 'Released' ? true : undefined;
    });
    const event = await volumeEvent(pvName);
    assert.match(event.note ?? '', /ClaimDeleting|NamespaceTerminating|WorkloadGone/);
    const retained = record.seen.find((c) => c.reason === 'DataRetained');
    assert.ok(retained, `DeletionProtected conditions seen: ${JSON.stringify(record.seen)}`);
    assert.match(retained.message, new RegExp(`PersistentVolume ${pvName}`));
  });

  it('a final backup Job that succeeds without a result is not retried: one backup, then Retain (the cause of two Jobs per deletion)', async () => {
    const ns = await env.namespace('noresult');
    await env.http.create(SAMPLEDBS, sampleDb(ns, 'orders'));
    const pvName = await readyAndHeld(ns, 'orders');
    const uid = (await env.http.get<Db>(SAMPLEDBS, { namespace: ns, name: 'orders' })).metadata.uid;
    await env.http.delete(SAMPLEDBS, { namespace: ns, name: 'orders' });
    await eventually(
      'SampleDB gone',
      async () => ((await getOrUndefined(env.http, SAMPLEDBS, ns, 'orders')) ? undefined : true),
      operator,
      90_000,
    );
    const finals = (
      await env.http.list<SampleDbBackupObject & KubeObject>(BACKUPS, {
        namespace: ns,
        labelSelector: `sampledb.io/final-for-uid=${uid}`,
      })
    ).items;
    assert.equal(finals.length, 1, `final backups: ${finals.map((b) => b.metadata.name).join(', ')}`);
    assert.equal(finals[0]?.status?.phase, 'Failed');
    await retainedVolume(pvName, /^FinalBackupNoResult$/);
    await eventually('data claim gone (its volume kept)', async () =>
      (await getOrUndefined(env.http, PVCS, ns, 'data-orders-0')) ? undefined : true,
    );
  });

  it('a data claim deleted by hand under a live SampleDB: its PV is retained, then the claim is released', async () => {
    const ns = await env.namespace('pvcdel');
    await env.http.create(SAMPLEDBS, sampleDb(ns, 'orders'));
    const pvName = await readyAndHeld(ns, 'orders');
    await env.http.delete(PVCS, { namespace: ns, name: 'data-orders-0' });
    await retainedVolume(pvName, /^ClaimDeleting$/);
    await eventually(
      'claim released by us (kubernetes.io/pvc-protection may still hold it for the pod)',
      async () => {
        const claim = await getOrUndefined<Pvc>(env.http, PVCS, ns, 'data-orders-0');
        return !claim?.metadata.finalizers?.includes(DATA_FINALIZER) ? true : undefined;
      },
      operator,
    );
    await volumeEvent(pvName);
  });

  it('a SampleDB removed without its deletion (finalizer taken off by hand) leaves no claim held by us', async () => {
    const ns = await env.namespace('gone');
    await env.http.create(SAMPLEDBS, sampleDb(ns, 'orders', 'Retain'));
    await readyAndHeld(ns, 'orders');
    // With the operator stopped, so it can neither add its finalizer back nor run the deletion.
    await operator.kill();
    await env.http.patch(
      SAMPLEDBS,
      { namespace: ns, name: 'orders' },
      { metadata: { finalizers: null } },
      'merge',
    );
    await env.http.delete(SAMPLEDBS, { namespace: ns, name: 'orders' });
    assert.equal(await getOrUndefined(env.http, SAMPLEDBS, ns, 'orders'), undefined);
    operator = env.startOperator();
    const claim = await eventually(
      'claim released',
      async () => {
        const c = await getOrUndefined<Pvc>(env.http, PVCS, ns, 'data-orders-0');
        return c && !c.metadata.finalizers?.includes(DATA_FINALIZER) ? c : undefined;
      },
      operator,
    );
    assert.equal(claim.metadata.deletionTimestamp, undefined, 'the claim itself is left alone');
  });
});
