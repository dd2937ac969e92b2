// What the e2e tests do as a user would: apply SampleDBs with kubectl, wait on their status, and talk to the real
// PostgreSQL through a client pod that connects by the Service's DNS name with the binding Secret's credentials.
import { randomBytes } from 'node:crypto';
import { pollUntil } from '../../../src/envtest/index.ts';
import { LOCAL_POSTGRES_REPOSITORY } from '../../../src/envtest/real-node/images.ts';
import type { E2eCluster } from './cluster.ts';

export interface Condition {
  type: string;
  status: string;
  observedGeneration?: number;
  reason?: string;
  message?: string;
}

export interface SampleDbStatus {
  phase?: string;
  currentVersion?: string;
  endpoint?: string;
  conditions?: Condition[];
  lastBackup?: string;
}

type Json = Record<string, unknown>;

export async function kubectlJson<T = Json>(
  cluster: E2eCluster,
  args: readonly string[],
): Promise<T | undefined> {
  const result = await cluster.kubectl([...args, '-o', 'json']);
  if (result.code !== 0) {
    if (/NotFound|not found/.test(result.stderr)) return undefined;
    throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}

export async function kubectlOk(
  cluster: E2eCluster,
  args: readonly string[],
  input?: string,
): Promise<string> {
  const result = await cluster.kubectl(args, input === undefined ? {} : { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

export async function apply(cluster: E2eCluster, objects: readonly Json[]): Promise<void> {
  await kubectlOk(cluster, ['apply', '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n'));
}

export function sampleDb(namespace: string, name: string, spec: Json): Json {
  return {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name, namespace },
    spec: { deletion: { protection: false }, ...spec },
  };
}

export async function statusOf(
  cluster: E2eCluster,
  namespace: string,
  name: string,
): Promise<SampleDbStatus> {
  const db = await kubectlJson<{ status?: SampleDbStatus }>(cluster, [
    'get',
    'sampledb',
    name,
    '-n',
    namespace,
  ]);
  return db?.status ?? {};
}

export const conditionOf = (status: SampleDbStatus, type: string): Condition | undefined =>
  status.conditions?.find((c) => c.type === type);

/** Polls until the SampleDB's Ready condition has `want` (default True); the last status is in the timeout error. */
export async function waitReady(
  cluster: E2eCluster,
  namespace: string,
  name: string,
  options: { want?: 'True' | 'False'; timeoutMs?: number } = {},
): Promise<SampleDbStatus> {
  const want = options.want ?? 'True';
  let last: SampleDbStatus = {};
  try {
    return await pollUntil(
      `SampleDB ${namespace}/${name} Ready=${want}`,
      async () => {
        last = await statusOf(cluster, namespace, name);
        return conditionOf(last, 'Ready')?.status === want ? last : undefined;
      },
      { timeoutMs: options.timeoutMs ?? 180_000, intervalMs: 500 },
    );
  } catch (error) {
    const pods = await cluster.kubectl(['get', 'pods,pvc,jobs,events', '-n', namespace]);
    throw new Error(`${(error as Error).message}\nlast status: ${JSON.stringify(last)}\n${pods.stdout}`);
  }
}

/** The pod spec a client needs under PodSecurity `restricted`. */
export const restrictedClient = {
  securityContext: {
    runAsNonRoot: true,
    runAsUser: 999,
    runAsGroup: 999,
    seccompProfile: { type: 'RuntimeDefault' },
  },
  container: {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    readOnlyRootFilesystem: true,
  },
};

export interface ClientResult {
  phase: string;
  logs: string;
}

/**
 * Runs `script` (sh) in a pod of the local PostgreSQL 15 image with the binding Secret's `uri` as $URI (and the
 * PG* variables from the connection ConfigMap), and returns its output once it has finished.
 */
export async function runClient(
  cluster: E2eCluster,
  namespace: string,
  sampleDbName: string,
  script: string,
  options: { timeoutMs?: number } = {},
): Promise<ClientResult> {
  const name = `client-${randomBytes(3).toString('hex')}`;
  await apply(cluster, [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace },
      spec: {
        restartPolicy: 'Never',
        securityContext: restrictedClient.securityContext,
        containers: [
          {
            name: 'psql',
            image: `${LOCAL_POSTGRES_REPOSITORY}:15`,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', script],
            env: [
              { name: 'URI', valueFrom: { secretKeyRef: { name: `${sampleDbName}-binding`, key: 'uri' } } },
              { name: 'PGCONNECT_TIMEOUT', value: '10' },
            ],
            securityContext: restrictedClient.container,
            volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
          },
        ],
        volumes: [{ name: 'tmp', emptyDir: {} }],
      },
    },
  ]);
  try {
    const phase = await pollUntil(
      `client pod ${name}`,
      async () => {
        const pod = await kubectlJson<{ status?: { phase?: string } }>(cluster, [
          'get',
          'pod',
          name,
          '-n',
          namespace,
        ]);
        const p = pod?.status?.phase;
        return p === 'Succeeded' || p === 'Failed' ? p : undefined;
      },
      { timeoutMs: options.timeoutMs ?? 60_000, intervalMs: 300 },
    );
    const logs = await kubectlOk(cluster, ['logs', name, '-n', namespace]);
    return { phase, logs };
  } finally {
    await cluster.kubectl(['delete', 'pod', name, '-n', namespace, '--wait=false']);
  }
}

/** Runs SQL through `psql "$URI"` (unaligned, tuples only) and returns its output; throws when psql fails. */
export async function sql(
  cluster: E2eCluster,
  namespace: string,
  sampleDbName: string,
  query: string,
): Promise<string> {
  const script = `psql "$URI" -X -q -At -v ON_ERROR_STOP=1 <<'SQL'\n${query}\nSQL`;
  const result = await runClient(cluster, namespace, sampleDbName, script);
  if (result.phase !== 'Succeeded') throw new Error(`psql failed:\n${result.logs}`);
  return result.logs.trim();
}

/** Per-table checksums of the public schema: table name → md5 of its rows in a fixed order. */
export async function tableChecksums(
  cluster: E2eCluster,
  namespace: string,
  sampleDbName: string,
): Promise<Record<string, string>> {
  return parseChecksums(await sql(cluster, namespace, sampleDbName, CHECKSUM_SQL));
}

/** psql input printing `<table> <md5 of its rows>` per public table (needs psql's gexec). */
export const CHECKSUM_SQL = [
  "SELECT format('SELECT %L || %L || coalesce(md5(string_agg(t::text, %L ORDER BY t::text)), %L) FROM %I.%I t',",
  "  tablename, ' ', ',', 'empty', schemaname, tablename)",
  "FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename \\gexec",
].join('\n');

export function parseChecksums(out: string): Record<string, string> {
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ') as [string, string]),
  );
}

/** A few tables with rows, so restores and volume moves have something to prove. */
export const SEED_SQL = [
  'CREATE TABLE orders (id bigserial PRIMARY KEY, customer text NOT NULL, total_cents bigint NOT NULL);',
  "INSERT INTO orders (customer, total_cents) SELECT 'customer-' || i, i * 100 FROM generate_series(1, 500) i;",
  'CREATE TABLE events (at timestamptz NOT NULL DEFAULT now(), payload jsonb);',
  `INSERT INTO events (payload) SELECT jsonb_build_object('n', i) FROM generate_series(1, 200) i;`,
].join('\n');

/** A merge patch of the SampleDB's spec, as `kubectl patch --type=merge` does it. */
export async function patchSpec(
  cluster: E2eCluster,
  namespace: string,
  name: string,
  spec: Json,
): Promise<void> {
  await kubectlOk(cluster, [
    'patch',
    'sampledb',
    name,
    '-n',
    namespace,
    '--type=merge',
    '-p',
    JSON.stringify({ spec }),
  ]);
}

/** The messages of the namespace's Events with `reason` (and `type`, when given). */
export async function eventMessages(
  cluster: E2eCluster,
  namespace: string,
  reason: string,
  type?: 'Normal' | 'Warning',
): Promise<string[]> {
  const list = await kubectlJson<{ items: { type?: string; message?: string }[] }>(cluster, [
    'get',
    'events',
    '-n',
    namespace,
    '--field-selector',
    `reason=${reason}`,
  ]);
  return (list?.items ?? []).filter((e) => !type || e.type === type).map((e) => e.message ?? '');
}
