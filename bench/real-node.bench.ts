/**
 * Benchmarks of the operator on a real node (kubelet, containerd, CNI, real PostgreSQL pods), each against a bare
 * baseline run in the same process, on the same node, interleaved round by round (no timed assertion anywhere):
 *  (f) first SQL: a SampleDB created → `SELECT 1` answered with the credentials the operator publishes (the binding
 *      Secret), against a bare StatefulSet with the same image, security context and volume (a claim of the same
 *      StorageClass and size) whose entrypoint creates the user from a Secret → `SELECT 1` answered. Both are asked
 *      from this machine at pod 0's IP every 100 ms, so the client's path is the same;
 *  (g) backup: a SampleDBBackup of a generated database of BENCH_REAL_DB_MB (default 1,024) created → Completed,
 *      against a bare Job running `pg_dump -Fc` of the same server to the same backup volume → Complete;
 *  (h) restore: a SampleDBRestore of that backup created → the restored data live with writes resumed
 *      (`status.restoredAt`: writes stopped, the restore Job restoring into a new database, checking and switching
 *      it in, writes resumed), → Completed (then also the safety backup of the replaced data and its drop, ADR 0014),
 *      and the restore Job alone, against a bare Job running `pg_restore --clean --if-exists` of the bare dump into
 *      the same database → Complete.
 * Rounds: BENCH_REAL_ROUNDS (first SQL, default 3) and BENCH_REAL_DATA_ROUNDS (backup and restore, default 1);
 * within a round the order of operator and bare alternates. Needs the real node (the e2e tier's setup: it builds the
 * images and installs dist/; SAMPLEDB_REAL_NODE_WAIT seconds to wait for another run holding the node). Prints a
 * table and writes bench/results/real-node-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { pollUntil } from '../src/envtest/index.ts';
import { LOCAL_POSTGRES_REPOSITORY } from '../src/envtest/real-node/images.ts';
import { namesFor } from '../src/sampledb/names.ts';
import { restoreJobName } from '../src/sampledb/restore/objects.ts';
import { type E2eCluster, startE2eCluster } from '../test/e2e/support/cluster.ts';
import {
  applyObjects,
  firstAnswer,
  type Json,
  jobDone,
  kubectlJson,
  median,
  type PgTarget,
  phaseReached,
  podIp,
  psql,
  secretData,
  spanSeconds,
} from './lib/real-node-kit.ts';

const rounds = Number(process.env.BENCH_REAL_ROUNDS ?? 3);
const dataRounds = Number(process.env.BENCH_REAL_DATA_ROUNDS ?? 1);
const databaseMb = Number(process.env.BENCH_REAL_DB_MB ?? 1024);
const VERSION = '17';
const IMAGE = `${LOCAL_POSTGRES_REPOSITORY}:${VERSION}`;
const PORT = 5432;
const DATABASE = 'app';
const namespace = `bench-real-${randomBytes(3).toString('hex')}`;
const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
const seconds = (ms: number) => ms / 1000;

const restricted = {
  pod: {
    runAsNonRoot: true,
    runAsUser: 999,
    runAsGroup: 999,
    fsGroup: 999,
    fsGroupChangePolicy: 'OnRootMismatch',
    seccompProfile: { type: 'RuntimeDefault' },
  },
  container: {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    readOnlyRootFilesystem: true,
  },
};

/** The bare baseline: a Secret, a headless Service and a one-replica StatefulSet the image initializes itself. */
function bareStatefulSet(name: string, password: string): Json[] {
  const labels = { app: name };
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      stringData: { username: DATABASE, password },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: { clusterIP: 'None', selector: labels, ports: [{ name: 'postgres', port: PORT }] },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name, namespace },
      spec: {
        replicas: 1,
        serviceName: name,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            securityContext: restricted.pod,
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            containers: [
              {
                name: 'postgres',
                image: IMAGE,
                imagePullPolicy: 'IfNotPresent',
                // The locally built image keeps Debian's postgresql.conf (localhost only); the official one listens
                // on every address. The operator sets it in its own config file.
                args: ['-c', 'listen_addresses=*'],
                ports: [{ name: 'postgres', containerPort: PORT }],
                env: [
                  { name: 'PGDATA', value: '/var/lib/postgresql/data/pgdata' },
                  { name: 'POSTGRES_DB', value: DATABASE },
                  { name: 'POSTGRES_USER', valueFrom: { secretKeyRef: { name, key: 'username' } } },
                  { name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { name, key: 'password' } } },
                ],
                securityContext: restricted.container,
                volumeMounts: [
                  { name: 'data', mountPath: '/var/lib/postgresql/data' },
                  { name: 'run', mountPath: '/var/run/postgresql' },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
            volumes: [
              { name: 'run', emptyDir: {} },
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
    },
  ];
}

function sampleDb(name: string, spec: Json = {}): Json {
  return {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name, namespace },
    spec: { version: VERSION, storage: { size: '1Gi' }, ...spec },
  };
}

async function targetAt(
  cluster: E2eCluster,
  pod: string,
  secret: string,
  keys: { user: string; password: string },
): Promise<PgTarget | undefined> {
  const [ip, data] = await Promise.all([
    podIp(cluster, namespace, pod),
    secretData(cluster, namespace, secret),
  ]);
  if (!ip || !data?.[keys.user] || !data[keys.password]) return undefined;
  return { host: ip, port: PORT, user: data[keys.user]!, password: data[keys.password]!, database: DATABASE };
}

const credentialKeys = { user: 'username', password: 'password' };

/**
 * Where a SampleDB's time to first SQL goes: seconds from its creation to each step, from the objects' own times
 * (whole seconds, as the apiserver and kubelet record them).
 */
async function timeline(cluster: E2eCluster, name: string): Promise<Record<string, number | undefined>> {
  const names = namesFor(name);
  type Meta = { metadata?: { creationTimestamp?: string } };
  const get = <T>(kind: string, n: string) =>
    kubectlJson<T & Meta>(cluster, ['get', kind, n, '-n', namespace]);
  const [db, sts, pod, job, binding] = await Promise.all([
    get<object>('sampledb', name),
    get<object>('statefulset', names.statefulSet),
    get<{
      status?: {
        conditions?: Array<{ type: string; lastTransitionTime?: string }>;
        containerStatuses?: Array<{ name: string; state?: { running?: { startedAt?: string } } }>;
      };
    }>('pod', `${names.statefulSet}-0`),
    get<{ status?: { startTime?: string; completionTime?: string } }>('job', names.initJob),
    get<object>('secret', names.bindingSecret),
  ]);
  const from = db?.metadata?.creationTimestamp;
  const at = (time?: string) => spanSeconds(from, time);
  const started = pod?.status?.containerStatuses?.find((c) => c.name === 'postgres')?.state?.running
    ?.startedAt;
  const podReady = pod?.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime;
  return {
    statefulSetCreated: at(sts?.metadata?.creationTimestamp),
    podCreated: at(pod?.metadata?.creationTimestamp),
    postgresStarted: at(started),
    podReady: at(podReady),
    initJobCreated: at(job?.metadata?.creationTimestamp),
    initJobStarted: at(job?.status?.startTime),
    initJobCompleted: at(job?.status?.completionTime),
    bindingSecretCreated: at(binding?.metadata?.creationTimestamp),
  };
}

/** (f) one SampleDB and one bare StatefulSet, created → first answer; seconds each. */
async function firstSqlRound(cluster: E2eCluster, round: number) {
  const bare = async () => {
    const name = `bare-${round}`;
    const t0 = performance.now();
    await applyObjects(cluster, bareStatefulSet(name, randomBytes(18).toString('base64url')));
    const t1 = await firstAnswer(
      `bare ${name}: first SQL`,
      () => targetAt(cluster, `${name}-0`, name, credentialKeys),
      300_000,
    );
    return seconds(t1 - t0);
  };
  const operator = async () => {
    const name = `db-${round}`;
    const t0 = performance.now();
    await applyObjects(cluster, [sampleDb(name, { deletion: { policy: 'Delete' } })]);
    const t1 = await firstAnswer(
      `SampleDB ${name}: first SQL with the binding Secret`,
      () => targetAt(cluster, `${name}-0`, namesFor(name).bindingSecret, credentialKeys),
      300_000,
    );
    const ready = await phaseReached(cluster, 'sampledb', namespace, name, ['Ready'], ['Failed'], 300_000);
    return {
      firstSql: seconds(t1 - t0),
      ready: seconds(ready.at - t0),
      timeline: await timeline(cluster, name),
    };
  };
  // Alternate who goes first: whichever runs second finds the node's caches warmer.
  if (round % 2 === 0) {
    const b = await bare();
    return { bare: b, ...(await operator()) };
  }
  const o = await operator();
  return { bare: await bare(), ...o };
}

/** Fills the database with about `mb` MB: two tables with indexes, as an application's data would look. */
async function generate(target: PgTarget, mb: number): Promise<number> {
  // About 145 bytes per order row and 109 per line row with their indexes and the database's own ~8 MB, measured
  // on PostgreSQL 17 (the first run's 200 and 150 made 743 MB of 1,024).
  const orders = Math.round((mb * 1024 * 1024 * 0.5) / 145);
  const lines = Math.round((mb * 1024 * 1024 * 0.5) / 109);
  await psql(
    target,
    `
    CREATE TABLE orders (id bigint PRIMARY KEY, customer integer NOT NULL, placed timestamptz NOT NULL,
                         amount numeric(12, 2) NOT NULL, note text);
    INSERT INTO orders SELECT g, g % 100000, timestamptz '2026-01-01' + g * interval '1 second',
                              (g % 100000) / 100.0, md5(g::text) || md5((g * 7)::text)
      FROM generate_series(1, ${orders}) g;
    CREATE INDEX orders_customer ON orders (customer);
    CREATE TABLE order_lines (order_id bigint NOT NULL REFERENCES orders, line integer NOT NULL,
                              sku text NOT NULL, quantity integer NOT NULL, PRIMARY KEY (order_id, line));
    INSERT INTO order_lines SELECT (g % ${orders}) + 1, g / ${orders}, 'SKU-' || (g % 5000), g % 9 + 1
      FROM generate_series(0, ${lines - 1}) g;
    VACUUM ANALYZE;
    `,
    10,
  );
  return Number(await psql(target, 'SELECT pg_database_size(current_database())'));
}

/** A bare Job on the SampleDB's backup volume: the same image and security context as the operator's Jobs. */
function bareJob(name: string, db: string, host: string, script: string): Json {
  const names = namesFor(db);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: 'Never',
          securityContext: restricted.pod,
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          containers: [
            {
              name: 'bare',
              image: IMAGE,
              imagePullPolicy: 'IfNotPresent',
              command: ['sh', '-ec', script],
              env: [
                { name: 'PGHOST', value: host },
                { name: 'PGPORT', value: String(PORT) },
                { name: 'PGDATABASE', value: DATABASE },
                { name: 'HOME', value: '/tmp' },
                {
                  name: 'PGUSER',
                  valueFrom: { secretKeyRef: { name: names.superuserSecret, key: 'username' } },
                },
                {
                  name: 'PGPASSWORD',
                  valueFrom: { secretKeyRef: { name: names.superuserSecret, key: 'password' } },
                },
              ],
              securityContext: restricted.container,
              volumeMounts: [
                { name: 'backups', mountPath: '/backups' },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            { name: 'backups', persistentVolumeClaim: { claimName: names.backupPvc } },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
  };
}

interface FirstSqlRound {
  bare: number;
  firstSql: number;
  ready: number;
  timeline: Record<string, number | undefined>;
}

interface DataRound {
  backup: number;
  bareDump: number;
  backupBytes?: number;
  bareDumpBytes?: number;
  restore: number;
  restored: number;
  restoreJob: number;
  restoreJobRun?: number;
  safetyBackup?: number;
  bareRestore: number;
  bareRestoreSpan?: number;
}

async function report(run: {
  started: Date;
  firstSql: FirstSqlRound[];
  data: DataRound[];
  databaseBytes?: number;
  rows?: string;
}): Promise<void> {
  const { started, firstSql, data, databaseBytes } = run;
  const m = (k: 'bare' | 'firstSql' | 'ready') => median(firstSql.map((r) => r[k]));
  const d = (k: keyof DataRound) => (data.length ? median(data.map((r) => Number(r[k]))) : Number.NaN);
  const results = {
    date: started.toISOString(),
    node: process.version,
    image: IMAGE,
    rounds,
    dataRounds,
    firstSql: {
      rounds: firstSql,
      ratio: m('firstSql') / m('bare'),
      goal: 1.5,
    },
    data: {
      databaseBytes,
      rows: run.rows,
      rounds: data,
      backupRatio: d('backup') / d('bareDump'),
      restoredRatio: d('restored') / d('bareRestore'),
      restoreRatio: d('restore') / d('bareRestore'),
      restoreJobRatio: d('restoreJob') / d('bareRestoreSpan'),
      goal: 1.1,
    },
  };
  const f = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
  const rows: [string, string][] = [
    ['(f) SampleDB → first SQL (binding Secret), median', `${f(m('firstSql'))} s`],
    ['(f) bare StatefulSet → first SQL, median', `${f(m('bare'))} s`],
    ['(f) ratio (goal ≤ 1.5)', f(results.firstSql.ratio)],
    ['(f) SampleDB → Ready, median', `${f(m('ready'))} s`],
    ['(g) database generated', `${f((databaseBytes ?? Number.NaN) / 1024 / 1024, 0)} MB`],
    ['(g) SampleDBBackup → Completed, median', `${f(d('backup'), 1)} s`],
    ['(g) bare pg_dump Job → Complete, median', `${f(d('bareDump'), 1)} s`],
    ['(g) ratio (goal ≤ 1.1)', f(results.data.backupRatio)],
    [
      '(h) SampleDBRestore → restored data live, writes resumed (restoredAt), median',
      `${f(d('restored'), 1)} s`,
    ],
    ['(h) bare pg_restore Job → Complete, median', `${f(d('bareRestore'), 1)} s`],
    ['(h) ratio restored / bare (goal ≤ 1.1)', f(results.data.restoredRatio)],
    [
      '(h) SampleDBRestore → Completed (+ safety backup of the replaced data, its drop), median',
      `${f(d('restore'), 1)} s`,
    ],
    ['(h) ratio Completed / bare', f(results.data.restoreRatio)],
    ['(h) its restore Job, created → complete (whole s), median', `${f(d('restoreJob'), 0)} s`],
    ['(h) bare pg_restore Job, created → complete (whole s), median', `${f(d('bareRestoreSpan'), 0)} s`],
    ['(h) ratio restore Job / bare Job', f(results.data.restoreJobRatio)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`${rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n')}\n`);
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  const file = new URL(
    `./results/real-node-${started.toISOString().replaceAll(':', '-')}.json`,
    import.meta.url,
  );
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`results: ${file.pathname}\n`);
}

async function main() {
  const started = new Date();
  const t = performance.now();
  const { plane, cluster } = await startE2eCluster();
  log(`real node and operator ready in ${seconds(performance.now() - t).toFixed(1)} s`);
  try {
    const ns = await cluster.kubectl(['create', 'namespace', namespace]);
    if (ns.code !== 0) throw new Error(ns.stderr);
    await cluster.kubectl(['label', 'namespace', namespace, 'pod-security.kubernetes.io/enforce=restricted']);

    // (f) first SQL.
    const firstSql: FirstSqlRound[] = [];
    for (let round = 0; round < rounds; round++) {
      const r = await firstSqlRound(cluster, round);
      firstSql.push(r);
      log(
        `first SQL round ${round + 1}: SampleDB ${r.firstSql.toFixed(2)} s, bare ${r.bare.toFixed(2)} s; ${JSON.stringify(r.timeline)}`,
      );
      // Out of the next round's way (policy Delete: no final backup).
      await cluster.kubectl(['delete', 'sampledb', `db-${round}`, '-n', namespace, '--wait=false']);
      await cluster.kubectl(['delete', 'statefulset', `bare-${round}`, '-n', namespace, '--wait=false']);
    }

    if (dataRounds === 0) {
      await report({ started, firstSql, data: [] });
      return;
    }
    // (g), (h): one SampleDB holding ~databaseMb, its backups and restores against bare pg_dump/pg_restore.
    const db = 'bulk';
    const names = namesFor(db);
    const storage = `${Math.max(4, Math.ceil((databaseMb * 3) / 1024))}Gi`;
    const backupSize = `${Math.max(8, Math.ceil((databaseMb * (2 * dataRounds + 2)) / 1024))}Gi`;
    await applyObjects(cluster, [
      sampleDb(db, {
        storage: { size: storage },
        backup: { volume: { size: backupSize } },
        deletion: { policy: 'Delete' },
      }),
    ]);
    await phaseReached(cluster, 'sampledb', namespace, db, ['Ready'], ['Failed'], 300_000);
    // The application's role owns its tables (as migrations and the restore assume): the binding Secret's.
    const owner = (await targetAt(cluster, `${db}-0`, names.bindingSecret, credentialKeys))!;
    const tGen = performance.now();
    const databaseBytes = await generate(owner, databaseMb);
    log(
      `generated ${(databaseBytes / 1024 / 1024).toFixed(0)} MB in ${seconds(performance.now() - tGen).toFixed(0)} s`,
    );
    const host = `${db}-0.${names.headlessService}.${namespace}.svc`;
    const rowCount = async () =>
      psql(owner, "SELECT (SELECT count(*) FROM orders) || ',' || (SELECT count(*) FROM order_lines)", 60);
    const rowsBefore = await rowCount();

    const data: DataRound[] = [];
    for (let round = 0; round < dataRounds; round++) {
      const backupName = `bulk-${round}`;
      const dump = `/backups/bare-${round}.dump`;
      const operatorBackup = async () => {
        const t0 = performance.now();
        await applyObjects(cluster, [
          {
            apiVersion: 'sampledb.io/v1alpha1',
            kind: 'SampleDBBackup',
            metadata: { name: backupName, namespace },
            spec: { sampleDB: { name: db } },
          },
        ]);
        const done = await phaseReached<{ status?: { phase?: string; sizeBytes?: number } }>(
          cluster,
          'sampledbbackup',
          namespace,
          backupName,
          ['Completed'],
          ['Failed'],
          1_800_000,
        );
        return { seconds: seconds(done.at - t0), bytes: done.object.status?.sizeBytes };
      };
      const bareDump = async () => {
        const job = `bare-dump-${round}`;
        const t0 = performance.now();
        await applyObjects(cluster, [
          bareJob(
            job,
            db,
            host,
            `pg_dump -Fc -f ${dump}.partial && mv ${dump}.partial ${dump} && wc -c < ${dump}`,
          ),
        ]);
        const done = await jobDone(cluster, namespace, job, 1_800_000);
        const logs = await cluster.kubectl(['logs', `job/${job}`, '-n', namespace]);
        return { seconds: seconds(done.finishedAt - t0), bytes: Number(logs.stdout.trim()) || undefined };
      };
      const first = round % 2 === 0 ? await bareDump() : await operatorBackup();
      const second = round % 2 === 0 ? await operatorBackup() : await bareDump();
      const [bareD, opB] = round % 2 === 0 ? [first, second] : [second, first];
      log(
        `backup round ${round + 1}: SampleDBBackup ${opB.seconds.toFixed(1)} s, bare pg_dump ${bareD.seconds.toFixed(1)} s`,
      );

      const operatorRestore = async () => {
        const name = `restore-${round}`;
        const t0 = performance.now();
        await applyObjects(cluster, [
          {
            apiVersion: 'sampledb.io/v1alpha1',
            kind: 'SampleDBRestore',
            metadata: { name, namespace },
            spec: { sampleDB: { name: db }, backup: { name: backupName } },
          },
        ]);
        // Data live again: the first poll that sees restoredAt (every 250 ms, as phaseReached polls).
        const restored = await pollUntil(
          `SampleDBRestore ${name} restoredAt`,
          async () => {
            const r = await kubectlJson<{
              status?: { phase?: string; restoredAt?: string; message?: string };
            }>(cluster, ['get', 'sampledbrestore', name, '-n', namespace]);
            if (r?.status?.phase === 'Failed' || r?.status?.phase === 'RolledBack')
              throw new Error(`SampleDBRestore ${name} ${r.status.phase}: ${r.status.message ?? ''}`);
            return r?.status?.restoredAt ? performance.now() : undefined;
          },
          { timeoutMs: 3_600_000, intervalMs: 250 },
        );
        const done = await phaseReached<{ status?: { phase?: string; safetyBackup?: string } }>(
          cluster,
          'sampledbrestore',
          namespace,
          name,
          ['Completed'],
          ['Failed', 'RolledBack'],
          3_600_000,
        );
        const restoreJob = await kubectlJson<{
          metadata: { creationTimestamp: string };
          status?: { completionTime?: string; startTime?: string };
        }>(cluster, ['get', 'job', restoreJobName(name), '-n', namespace]);
        const safetyName = done.object.status?.safetyBackup;
        const safety = safetyName
          ? await kubectlJson<{ metadata: { creationTimestamp: string }; status?: { completedAt?: string } }>(
              cluster,
              ['get', 'sampledbbackup', safetyName, '-n', namespace],
            )
          : undefined;
        return {
          seconds: seconds(done.at - t0),
          restored: seconds(restored - t0),
          job: spanSeconds(restoreJob?.metadata.creationTimestamp, restoreJob?.status?.completionTime),
          jobRun: spanSeconds(restoreJob?.status?.startTime, restoreJob?.status?.completionTime),
          safety: spanSeconds(safety?.metadata.creationTimestamp, safety?.status?.completedAt),
        };
      };
      const bareRestore = async () => {
        const job = `bare-restore-${round}`;
        const t0 = performance.now();
        await applyObjects(cluster, [
          bareJob(job, db, host, `pg_restore --clean --if-exists -d "$PGDATABASE" ${dump}`),
        ]);
        const done = await jobDone(cluster, namespace, job, 3_600_000);
        const j = await kubectlJson<{ metadata: { creationTimestamp: string } }>(cluster, [
          'get',
          'job',
          job,
          '-n',
          namespace,
        ]);
        return {
          seconds: seconds(done.finishedAt - t0),
          span: spanSeconds(j?.metadata.creationTimestamp, done.completionTime),
          run: spanSeconds(done.startTime, done.completionTime),
        };
      };
      const rFirst = round % 2 === 0 ? await operatorRestore() : await bareRestore();
      const rSecond = round % 2 === 0 ? await bareRestore() : await operatorRestore();
      const [opR, bareR] = (round % 2 === 0 ? [rFirst, rSecond] : [rSecond, rFirst]) as [
        Awaited<ReturnType<typeof operatorRestore>>,
        Awaited<ReturnType<typeof bareRestore>>,
      ];
      log(
        `restore round ${round + 1}: SampleDBRestore restored ${opR.restored.toFixed(1)} s, Completed ${opR.seconds.toFixed(1)} s (its Job ${opR.job ?? '?'} s), bare pg_restore ${bareR.seconds.toFixed(1)} s (${bareR.span ?? '?'} s)`,
      );
      data.push({
        backup: opB.seconds,
        bareDump: bareD.seconds,
        backupBytes: opB.bytes,
        bareDumpBytes: bareD.bytes,
        restore: opR.seconds,
        restored: opR.restored,
        restoreJob: opR.job ?? Number.NaN,
        restoreJobRun: opR.jobRun,
        safetyBackup: opR.safety,
        bareRestore: bareR.seconds,
        bareRestoreSpan: bareR.span,
      });
    }
    const rowsAfter = await rowCount();
    if (rowsAfter !== rowsBefore)
      throw new Error(`rows changed by the restores: ${rowsBefore} → ${rowsAfter}`);

    await report({ started, firstSql, data, databaseBytes, rows: rowsBefore });
  } finally {
    await cluster.kubectl(['delete', 'namespace', namespace, '--wait=false']);
    await plane.stop();
  }
}

await main();
