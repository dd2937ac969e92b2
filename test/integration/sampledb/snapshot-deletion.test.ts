// End to end: deletion.policy Snapshot on a cluster that serves the VolumeSnapshot API. The CRDs and a
// VolumeSnapshotClass are installed before the operator process starts (it discovers the API once, at start), and the
// test plays the snapshot controller, holding each VolumeSnapshot not-ready until it decides otherwise. Proves that
// the data PVC and the StatefulSet are only deleted once the snapshot of the data is readyToUse, that no pg_dump is
// taken instead, and that a failing snapshot keeps the data and says why.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SampleDbObject, SampleDbSpec } from '../../../src/api/index.ts';
import { pollUntil } from '../../../src/envtest/index.ts';
import type { KubeObject, ResourceType } from '../../../src/runtime/index.ts';
import { Gate } from '../support/kubelet.ts';
import type { OperatorProcess } from '../support/operator.ts';
import {
  snapshotCrdManifests,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOTS,
  type VolumeSnapshot,
  volumeSnapshotClass,
} from '../support/snapshot-api.ts';
import {
  BACKUPS,
  type E2eEnv,
  eventually,
  getOrUndefined,
  JOBS,
  PVCS,
  SAMPLEDBS,
  STATEFULSETS,
  startE2eEnv,
} from './e2e-env.ts';

type Db = SampleDbObject & KubeObject;
type Condition = { type: string; status: string; reason: string; message: string };

const SNAPSHOT_CLASS = 'csi-hostpath-snapclass';
const INSTANCE = 'app.kubernetes.io/instance';
const COMPONENT = 'app.kubernetes.io/component';
const FINAL_FOR = 'sampledb.io/final-for-uid';

let env: E2eEnv;
let operator: OperatorProcess;

/**
 * Stands in for the external-snapshotter: notices each new VolumeSnapshot, and once the test releases the hold of its
 * SampleDB, reports it readyToUse (or the error the test chose) through the status subresource.
 */
class FakeSnapshotController {
  /** When each VolumeSnapshot ("namespace/name") was first seen. */
  readonly seen = new Map<string, number>();
  readonly errors: unknown[] = [];
  readonly #holds = new Map<string, Gate>();
  readonly #failures = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  /** Snapshots of this SampleDB stay not-ready until the returned gate is opened. */
  hold(namespace: string, instance: string): Gate {
    const gate = new Gate();
    this.#holds.set(`${namespace}/${instance}`, gate);
    return gate;
  }

  /** Snapshots of this SampleDB report `message` as their error instead of becoming ready. */
  fail(namespace: string, instance: string, message: string): void {
    this.#failures.set(`${namespace}/${instance}`, message);
  }

  start(): void {
    this.#timer = setInterval(() => void this.#poll(), 100);
  }

  stop(): void {
    clearInterval(this.#timer);
    for (const gate of this.#holds.values()) gate.open();
  }

  async markReady(s: VolumeSnapshot): Promise<void> {
    const pvc = await getOrUndefined<
      KubeObject & { spec?: { resources?: { requests?: { storage?: string } } } }
    >(env.http, PVCS, s.metadata.namespace ?? '', s.spec?.source?.persistentVolumeClaimName ?? '');
    await this.#patchStatus(s, {
      readyToUse: true,
      creationTime: new Date().toISOString(),
      restoreSize: pvc?.spec?.resources?.requests?.storage ?? '1Gi',
      error: null,
    });
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const list = await env.http.list<VolumeSnapshot>(VOLUME_SNAPSHOTS);
      for (const s of list.items) {
        const key = `${s.metadata.namespace}/${s.metadata.name}`;
        if (this.seen.has(key)) continue;
        this.seen.set(key, performance.now());
        void this.#settle(s).catch((err: unknown) => this.errors.push(err));
      }
    } catch (err) {
      this.errors.push(err);
    } finally {
      this.#polling = false;
    }
  }

  async #settle(s: VolumeSnapshot): Promise<void> {
    const owner = `${s.metadata.namespace}/${s.metadata.labels?.[INSTANCE] ?? ''}`;
    await this.#holds.get(owner)?.wait();
    const failure = this.#failures.get(owner);
    if (failure === undefined) return this.markReady(s);
    await this.#patchStatus(s, {
      readyToUse: false,
      error: { message: failure, time: new Date().toISOString() },
    });
  }

  async #patchStatus(s: VolumeSnapshot, status: Record<string, unknown>): Promise<void> {
    await env.http.patch(
      VOLUME_SNAPSHOTS,
      { namespace: s.metadata.namespace ?? '', name: s.metadata.name ?? '' },
      { status },
      'merge',
      { subresource: 'status' },
    );
  }
}

const snapshotter = new FakeSnapshotController();

/** Open timelines, stopped in after() when a failed test left one watching (an open watch keeps the client busy). */
const timelines = new Set<Timeline>();

/** Records, from watches, when things happen to the objects of one SampleDB (first occurrence of each). */
class Timeline {
  readonly events: Array<{ at: number; what: string }> = [];
  readonly #stop = new AbortController();

  constructor(namespace: string) {
    timelines.add(this);
    this.#watch(PVCS, namespace, (type, o) => {
      if (type === 'DELETED' || o.metadata.deletionTimestamp) return `pvc-deleted:${o.metadata.name}`;
      return type === 'ADDED' ? `pvc-created:${o.metadata.name}` : undefined;
    });
    this.#watch(STATEFULSETS, namespace, (type, o) =>
      type === 'DELETED' || o.metadata.deletionTimestamp ? `sts-deleted:${o.metadata.name}` : undefined,
    );
    this.#watch(VOLUME_SNAPSHOTS, namespace, (type, o) => {
      const s = o as VolumeSnapshot;
      if (type === 'DELETED' || o.metadata.deletionTimestamp) return `snapshot-deleted:${o.metadata.name}`;
      if (s.status?.readyToUse === true) return `snapshot-ready:${o.metadata.name}`;
      return type === 'ADDED' ? `snapshot-created:${o.metadata.name}` : undefined;
    });
    this.#watch(BACKUPS, namespace, (type, o) =>
      type === 'ADDED' ? `backup:${o.metadata.name}` : undefined,
    );
    this.#watch(JOBS, namespace, (type, o) =>
      type === 'ADDED' && o.metadata.labels?.[COMPONENT] === 'backup'
        ? `backup-job:${o.metadata.name}`
        : undefined,
    );
  }

  first(what: string): number | undefined {
    return this.events.find((e) => e.what === what)?.at;
  }

  has(prefix: string): boolean {
    return this.events.some((e) => e.what.startsWith(prefix));
  }

  toString(): string {
    return JSON.stringify(this.events);
  }

  stop(): void {
    this.#stop.abort();
    timelines.delete(this);
  }

  #watch(
    rt: ResourceType,
    namespace: string,
    describe: (type: string, o: KubeObject) => string | undefined,
  ): void {
    const run = async () => {
      // Starting from now: objects that already exist arrive as ADDED first, which is what "created" needs.
      const stream = await env.http.watch<KubeObject>(rt, {
        namespace,
        signal: this.#stop.signal,
        timeoutSeconds: 600,
      });
      for await (const event of stream) {
        const what = describe(event.type, event.object);
        if (what && !this.events.some((e) => e.what === what))
          this.events.push({ at: performance.now(), what });
      }
    };
    void run().catch(() => {
      // Aborted at the end of the test.
    });
  }
}

function sampleDb(namespace: string, name: string, spec: Partial<SampleDbSpec> = {}): Db {
  return {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name, namespace },
    spec: { version: '16', storage: { size: '1Gi' }, deletion: { policy: 'Snapshot' }, ...spec },
  } as Db;
}

const getDb = (ns: string, name: string) => getOrUndefined<Db>(env.http, SAMPLEDBS, ns, name);
const condition = (db: Db | undefined, type: string) =>
  (db?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);

async function createReady(ns: string, name: string): Promise<Db> {
  await env.http.create(SAMPLEDBS, sampleDb(ns, name));
  return eventually(
    `SampleDB ${ns}/${name} Ready`,
    async () => {
      const db = await getDb(ns, name);
      return db?.status?.phase === 'Ready' && condition(db, 'Ready')?.status === 'True' ? db : undefined;
    },
    operator,
  );
}

async function finalSnapshotOf(ns: string, db: Db): Promise<VolumeSnapshot> {
  return eventually(
    `final VolumeSnapshot of ${db.metadata.name}`,
    async () => {
      const list = await env.http.list<VolumeSnapshot>(VOLUME_SNAPSHOTS, {
        namespace: ns,
        labelSelector: `${FINAL_FOR}=${db.metadata.uid}`,
      });
      return list.items[0];
    },
    operator,
  );
}

/** The data-holding objects of a SampleDB are there and nobody has started deleting them. */
async function assertDataKept(ns: string, name: string, timeline: Timeline): Promise<void> {
  const sts = await getOrUndefined<KubeObject>(env.http, STATEFULSETS, ns, name);
  assert.ok(sts && !sts.metadata.deletionTimestamp, 'StatefulSet kept');
  const pvc = await getOrUndefined<KubeObject>(env.http, PVCS, ns, `data-${name}-0`);
  assert.ok(pvc && !pvc.metadata.deletionTimestamp, 'data PVC kept');
  assert.ok(!timeline.has(`sts-deleted:${name}`), timeline.toString());
  assert.ok(!timeline.has(`pvc-deleted:data-${name}-0`), timeline.toString());
}

before(async () => {
  env = await startE2eEnv();
  // The snapshot API must be served before the operator starts: it decides once whether to watch it.
  await env.kubectl(
    ['apply', '--server-side', '-f', '-'],
    snapshotCrdManifests()
      .map((m) => JSON.stringify(m))
      .join('\n'),
  );
  await eventually('snapshot CRDs established', async () => {
    await env.http.list(VOLUME_SNAPSHOTS);
    await env.http.list(VOLUME_SNAPSHOT_CLASSES);
    return true;
  });
  await env.kubectl(
    ['apply', '--server-side', '-f', '-'],
    JSON.stringify(volumeSnapshotClass(SNAPSHOT_CLASS, 'hostpath.csi.test')),
  );
  snapshotter.start();
  operator = env.startOperator();
});

after(async () => {
  for (const timeline of timelines) timeline.stop();
  snapshotter.stop();
  await env?.stop();
});

describe('deletion.policy Snapshot with the VolumeSnapshot API (operator process, ServiceAccount RBAC)', {
  concurrency: false,
}, () => {
  let ns: string;

  it('discovers the snapshot API at start', async () => {
    ns = await env.namespace('snap');
    const started = await eventually(
      'operator started',
      async () => operator.logs().find((l) => l.msg === 'sampledb-operator starting'),
      operator,
    );
    assert.equal(started.snapshots, true);
  });

  it('snapshots the data PVC and deletes it and the StatefulSet only once the snapshot is readyToUse', async () => {
    const db = await createReady(ns, 'vault');
    const timeline = new Timeline(ns);
    await eventually('timeline sees the data PVC', async () => timeline.first('pvc-created:data-vault-0'));
    const hold = snapshotter.hold(ns, 'vault');
    await env.http.delete(SAMPLEDBS, { namespace: ns, name: 'vault' });

    const snapshot = await finalSnapshotOf(ns, db);
    assert.equal(snapshot.spec?.source?.persistentVolumeClaimName, 'data-vault-0');
    assert.equal(snapshot.spec?.volumeSnapshotClassName, SNAPSHOT_CLASS);
    assert.equal(snapshot.metadata.labels?.[INSTANCE], 'vault');
    assert.equal(
      snapshot.metadata.ownerReferences,
      undefined,
      'the snapshot is not garbage-collected with it',
    );

    // The operator has seen the snapshot and is waiting for it; nothing holding data is touched meanwhile.
    let gone = false;
    const waiting = await pollUntil(
      'DeletionProtected SnapshotInProgress',
      async () => {
        const d = await getDb(ns, 'vault');
        gone = d === undefined;
        return condition(d, 'DeletionProtected')?.reason === 'SnapshotInProgress' ? d : undefined;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 200,
        failFast: () =>
          gone ? `the SampleDB was deleted while its snapshot was not ready: ${timeline}` : undefined,
      },
    );
    assert.equal(waiting.status?.phase, 'Deleting');
    assert.equal(condition(waiting, 'DeletionProtected')?.status, 'False');
    await assertDataKept(ns, 'vault', timeline);

    const releasedAt = performance.now();
    hold.open();
    await eventually(
      'SampleDB vault gone',
      async () => ((await getDb(ns, 'vault')) ? undefined : true),
      operator,
    );
    await eventually('data PVC gone', async () =>
      (await getOrUndefined(env.http, PVCS, ns, 'data-vault-0')) ? undefined : true,
    );
    assert.equal(await getOrUndefined(env.http, STATEFULSETS, ns, 'vault'), undefined);
    timeline.stop();

    const ready = timeline.first(`snapshot-ready:${snapshot.metadata.name}`);
    const stsDeleted = timeline.first('sts-deleted:vault');
    const pvcDeleted = timeline.first('pvc-deleted:data-vault-0');
    assert.ok(
      ready !== undefined && stsDeleted !== undefined && pvcDeleted !== undefined,
      timeline.toString(),
    );
    assert.ok(releasedAt < ready, timeline.toString());
    assert.ok(ready <= stsDeleted && ready <= pvcDeleted, timeline.toString());
    assert.ok(stsDeleted <= pvcDeleted, `the workload goes before its volume: ${timeline}`);

    // No pg_dump fallback: no final SampleDBBackup, no backup Job, no backup volume created for it.
    assert.ok(!timeline.has('backup:') && !timeline.has('backup-job:'), timeline.toString());
    assert.ok(!timeline.has('pvc-created:vault-backups'), timeline.toString());
    const backups = await env.http.list<KubeObject>(BACKUPS, { namespace: ns });
    assert.deepEqual(
      backups.items.map((b) => b.metadata.name),
      [],
    );

    // The snapshot is the user's data now: it outlives the SampleDB, ready to restore from.
    const kept = await getOrUndefined<VolumeSnapshot>(
      env.http,
      VOLUME_SNAPSHOTS,
      ns,
      snapshot.metadata.name ?? '',
    );
    assert.ok(kept && !kept.metadata.deletionTimestamp, 'VolumeSnapshot kept');
    assert.equal(kept.status?.readyToUse, true);
    assert.ok(!timeline.has('snapshot-deleted:'), timeline.toString());
    assert.equal(snapshotter.seen.size, 1, 'one snapshot, taken once');
  });

  it('keeps the data and reports the snapshot error while the snapshot fails, and finishes once it is ready', async () => {
    const db = await createReady(ns, 'ledger');
    const timeline = new Timeline(ns);
    await eventually('timeline sees the data PVC', async () => timeline.first('pvc-created:data-ledger-0'));
    snapshotter.fail(ns, 'ledger', 'Failed to create snapshot: driver hostpath.csi.test is out of space');
    await env.http.delete(SAMPLEDBS, { namespace: ns, name: 'ledger' });

    const snapshot = await finalSnapshotOf(ns, db);
    const failed = await eventually(
      'DeletionProtected SnapshotFailed',
      async () => {
        const d = await getDb(ns, 'ledger');
        return condition(d, 'DeletionProtected')?.reason === 'SnapshotFailed' ? d : undefined;
      },
      operator,
    );
    const protectedCondition = condition(failed, 'DeletionProtected');
    assert.equal(protectedCondition?.status, 'False');
    assert.match(
      protectedCondition?.message ?? '',
      new RegExp(`${snapshot.metadata.name}: Failed to create snapshot`),
    );
    assert.match(protectedCondition?.message ?? '', /out of space/);
    assert.ok(failed.metadata.finalizers?.includes('sampledb.io/finalizer'));
    await assertDataKept(ns, 'ledger', timeline);
    assert.ok(!timeline.has('backup:'), 'no pg_dump fallback when the snapshot fails');

    // The snapshot controller recovers: the deletion completes from the same snapshot, without a second one.
    await snapshotter.markReady(snapshot);
    await eventually(
      'SampleDB ledger gone',
      async () => ((await getDb(ns, 'ledger')) ? undefined : true),
      operator,
    );
    timeline.stop();
    const snapshots = await env.http.list<VolumeSnapshot>(VOLUME_SNAPSHOTS, {
      namespace: ns,
      labelSelector: `${FINAL_FOR}=${db.metadata.uid}`,
    });
    assert.deepEqual(
      snapshots.items.map((s) => s.metadata.name),
      [snapshot.metadata.name],
    );
    const ready = timeline.first(`snapshot-ready:${snapshot.metadata.name}`);
    const pvcDeleted = timeline.first('pvc-deleted:data-ledger-0');
    assert.ok(ready !== undefined && pvcDeleted !== undefined && ready <= pvcDeleted, timeline.toString());
  });

  it('stops cleanly, and the fake snapshot controller had no errors', async () => {
    assert.deepEqual(await operator.stop(), { code: 0, signal: null });
    assert.deepEqual(snapshotter.errors, []);
    assert.deepEqual(env.kubelet.errors, []);
  });
});
