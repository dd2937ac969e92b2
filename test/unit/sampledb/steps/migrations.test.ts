// spec.migrations through the whole reconcile, on the fake apiserver with the controllers played by the test and
// the migration Job played by a model of the script (a record table of name → checksum): the list is applied once,
// an appended entry alone runs next, an edited applied entry is refused with a condition and an Event, and a
// failing one carries its SQL error while later ones wait.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ConfigMap, V1Job, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { SampleDbObject } from '../../../../src/api/index.ts';
import { silentLogger } from '../../../../src/runtime/index.ts';
import { SampleDbReconciler } from '../../../../src/sampledb/reconciler.ts';
import { CONFIGMAPS, JOBS, PODS, SAMPLEDBS, STATEFULSETS } from '../../../../src/sampledb/resources.ts';
import { sampleDb } from '../../../support/sampledb.ts';
import { FakeApiserver } from '../support/fake-apiserver.ts';
import { finishedJob, finishedJobPod } from '../support/job-pod.ts';

const REQ = { namespace: 'shop', name: 'orders' };
const rc = { signal: new AbortController().signal, log: silentLogger, reconcileID: 't', retries: 0 };

class Cluster {
  readonly api = new FakeApiserver();
  clock = Date.parse('2026-02-01T00:00:00Z');
  /** The database's sampledb_operator.migrations. */
  readonly recorded = new Map<string, string>();
  readonly applications: string[] = [];
  /** Migrations whose SQL fails. */
  readonly failing = new Set<string>();
  readonly migrationJobs: string[] = [];

  async reconcile(): Promise<void> {
    const now = new Date(this.clock);
    const { client, view } = this.api.operator(() => now);
    await new SampleDbReconciler({ client, view, now: () => now }).reconcile(REQ, rc);
  }

  /** The script's decisions, on the record table of this model. */
  #migrate(env: Record<string, string>): { code: number; message: string } {
    let applied = 0;
    for (const line of (env.SAMPLEDB_MIGRATIONS ?? '').split('\n').filter(Boolean)) {
      const [name = '', checksum = ''] = line.split(' ');
      const recorded = this.recorded.get(name);
      if (recorded === checksum) {
        applied++;
        continue;
      }
      if (recorded)
        return { code: 3, message: `result=changed\nmigration=${name}\napplied=${applied}\nerror=changed` };
      if (this.failing.has(name)) {
        return {
          code: 1,
          message: `result=failed\nmigration=${name}\napplied=${applied}\nerror=relation "nope" does not exist`,
        };
      }
      this.recorded.set(name, checksum);
      this.applications.push(name);
      applied++;
    }
    return { code: 0, message: `result=applied\napplied=${applied}` };
  }

  async play(): Promise<void> {
    this.clock += 30_000;
    const api = this.api;
    const sts = api.get(STATEFULSETS, 'shop', 'orders') as V1StatefulSet | undefined;
    const pod = api.get(PODS, 'shop', 'orders-0') as V1Pod | undefined;
    if (sts && !pod) {
      const image = sts.spec?.template.spec?.containers.find((c) => c.name === 'postgres')?.image as string;
      api.put(PODS, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'orders-0', namespace: 'shop' },
        spec: { containers: [{ name: 'postgres', image }] },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      });
      api.put(STATEFULSETS, { ...sts, status: { replicas: 1, readyReplicas: 1 } } as V1StatefulSet);
    }
    for (const job of api.list(JOBS) as V1Job[]) {
      if (job.status?.succeeded || job.status?.conditions?.length || !pod) continue;
      const name = job.metadata?.name as string;
      const container = job.spec?.template.spec?.containers[0];
      const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value ?? '']));
      const run =
        env.SAMPLEDB_SCRIPT === 'sampledb-migrate'
          ? this.#migrate(env)
          : { code: 0, message: 'server_version=16.4\n' };
      if (env.SAMPLEDB_SCRIPT === 'sampledb-migrate') this.migrationJobs.push(name);
      api.put(PODS, finishedJobPod(job, run.code, run.message, new Date(this.clock)));
      api.put(JOBS, finishedJob(job, run.code, new Date(this.clock)));
    }
  }

  db(): SampleDbObject {
    return this.api.get(SAMPLEDBS, 'shop', 'orders') as SampleDbObject;
  }

  async settle(until: (db: SampleDbObject) => boolean, limit = 40): Promise<void> {
    for (let i = 0; i < limit; i++) {
      await this.reconcile();
      await this.play();
      if (until(this.db())) return;
    }
    assert.fail(`did not settle: ${JSON.stringify(this.db().status, null, 1)}`);
  }

  sql(data: Record<string, string>): void {
    this.api.put(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'schema', namespace: 'shop' },
      data,
    } as V1ConfigMap);
  }

  setMigrations(names: string[]): void {
    const db = this.db();
    this.api.put(SAMPLEDBS, {
      ...db,
      spec: {
        ...db.spec,
        migrations: names.map((name) => ({ name, configMap: { name: 'schema', key: name } })),
      },
    });
  }
}

const migrated = (db: SampleDbObject) => db.status?.conditions?.find((c) => c.type === 'Migrated');

async function started(names: string[], data: Record<string, string>): Promise<Cluster> {
  const cluster = new Cluster();
  cluster.sql(data);
  cluster.api.put(
    SAMPLEDBS,
    sampleDb({ migrations: names.map((name) => ({ name, configMap: { name: 'schema', key: name } })) }),
  );
  return cluster;
}

describe('migrations through the reconcile (fake apiserver)', () => {
  it('applies the list once after the database is ready, then only an appended entry', async () => {
    const cluster = await started(['a', 'b'], { a: 'CREATE TABLE a ();', b: 'CREATE TABLE b ();' });
    await cluster.settle((db) => migrated(db)?.status === 'True');
    assert.deepEqual(cluster.applications, ['a', 'b']);
    assert.deepEqual(
      cluster.db().status?.migrations?.map((m) => m.name),
      ['a', 'b'],
    );
    assert.equal(cluster.db().status?.migrations?.[0]?.checksum.length, 64);
    // Nothing more runs while nothing changes.
    for (let i = 0; i < 3; i++) {
      await cluster.reconcile();
      await cluster.play();
    }
    assert.equal(cluster.migrationJobs.length, 1);

    cluster.sql({ a: 'CREATE TABLE a ();', b: 'CREATE TABLE b ();', c: 'CREATE TABLE c ();' });
    cluster.setMigrations(['a', 'b', 'c']);
    await cluster.settle((db) => db.status?.migrations?.length === 3 && migrated(db)?.status === 'True');
    assert.deepEqual(cluster.applications, ['a', 'b', 'c']);
    assert.equal(cluster.migrationJobs.length, 2);
    assert.ok(cluster.api.events.some((e) => (e as { reason?: string }).reason === 'MigrationsApplied'));
  });

  it('refuses an edited applied entry with a condition and a Warning Event, running no Job', async () => {
    const cluster = await started(['a'], { a: 'CREATE TABLE a ();' });
    await cluster.settle((db) => migrated(db)?.status === 'True');
    cluster.sql({ a: 'CREATE TABLE a (id int);' });
    await cluster.settle((db) => migrated(db)?.reason === 'MigrationChanged');
    assert.match(
      migrated(cluster.db())?.message ?? '',
      /was applied with sha256:[0-9a-f]{64}.*now has sha256/,
    );
    assert.equal(cluster.migrationJobs.length, 1);
    assert.ok(
      cluster.api.events.some(
        (e) =>
          (e as { reason?: string; type?: string }).reason === 'MigrationChanged' &&
          (e as { type?: string }).type === 'Warning',
      ),
    );
  });

  it('a failing migration carries its SQL error, keeps what applied before it, and later ones wait', async () => {
    const cluster = await started(['a', 'b', 'c'], { a: 'x', b: 'broken', c: 'z' });
    cluster.failing.add('b');
    await cluster.settle((db) => migrated(db)?.reason === 'MigrationFailed');
    const condition = migrated(cluster.db());
    assert.match(
      condition?.message ?? '',
      /Migration b failed and was rolled back: relation "nope" does not exist\./,
    );
    assert.match(condition?.message ?? '', /Later migrations wait: c\./);
    assert.deepEqual(
      cluster.db().status?.migrations?.map((m) => m.name),
      ['a'],
    );
    assert.deepEqual(cluster.applications, ['a']);
    // Fixed SQL: a new Job, which applies b and c.
    cluster.failing.delete('b');
    cluster.sql({ a: 'x', b: 'fixed', c: 'z' });
    await cluster.settle((db) => migrated(db)?.status === 'True');
    assert.deepEqual(cluster.applications, ['a', 'b', 'c']);
  });
});
