// What the real-node benchmark needs from the cluster it started: kubectl as JSON, Secrets decoded, a pod's IP,
// psql from this machine to a pod (the harness's bridge is reachable from here), and Jobs and custom objects
// waited on with bounded polls.
import { spawn } from 'node:child_process';
import { pollUntil } from '../../src/envtest/index.ts';
import type { E2eCluster } from '../../test/e2e/support/cluster.ts';
import { kubectlJson, kubectlOk } from '../../test/e2e/support/sampledb.ts';

export { kubectlJson };

export type Json = Record<string, unknown>;

/** Server-side apply of `objects`, as a user's `kubectl apply --server-side` does. */
export async function applyObjects(cluster: E2eCluster, objects: readonly Json[]): Promise<void> {
  await kubectlOk(
    cluster,
    ['apply', '--server-side', '-f', '-'],
    objects.map((o) => JSON.stringify(o)).join('\n'),
  );
}

export async function secretData(
  cluster: E2eCluster,
  namespace: string,
  name: string,
): Promise<Record<string, string> | undefined> {
  const secret = await kubectlJson<{ data?: Record<string, string> }>(cluster, [
    'get',
    'secret',
    name,
    '-n',
    namespace,
  ]);
  if (!secret?.data) return undefined;
  return Object.fromEntries(
    Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
}

export async function podIp(
  cluster: E2eCluster,
  namespace: string,
  pod: string,
): Promise<string | undefined> {
  const p = await kubectlJson<{ status?: { podIP?: string } }>(cluster, ['get', 'pod', pod, '-n', namespace]);
  return p?.status?.podIP || undefined;
}

export interface PgTarget {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

/** psql from this machine; resolves with its output, rejects with its error text. */
export function psql(target: PgTarget, sql: string, timeoutSeconds = 2): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'psql',
      ['-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-h', target.host, '-p', String(target.port)],
      {
        env: {
          PATH: process.env.PATH,
          PGUSER: target.user,
          PGPASSWORD: target.password,
          PGDATABASE: target.database,
          PGCONNECT_TIMEOUT: String(timeoutSeconds),
          PGAPPNAME: 'sampledb-bench',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(err.trim() || `psql exited ${code}`)),
    );
    child.stdin.end(sql);
  });
}

/** Polls until `SELECT 1` answers; the time it answered (performance.now()). */
export async function firstAnswer(
  what: string,
  target: () => Promise<PgTarget | undefined>,
  timeoutMs: number,
): Promise<number> {
  return pollUntil(
    what,
    async () => {
      const t = await target();
      if (!t) return undefined;
      try {
        return (await psql(t, 'SELECT 1', 1)) === '1' ? performance.now() : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs, intervalMs: 100 },
  );
}

interface JobStatus {
  status?: {
    succeeded?: number;
    failed?: number;
    startTime?: string;
    completionTime?: string;
    conditions?: Array<{ type: string; status: string; message?: string }>;
  };
}

/** Waits for a Job to complete; throws with its pod's log when it failed. */
export async function jobDone(
  cluster: E2eCluster,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<{ finishedAt: number; startTime?: string; completionTime?: string }> {
  return pollUntil(
    `Job ${name} complete`,
    async () => {
      const job = await kubectlJson<JobStatus>(cluster, ['get', 'job', name, '-n', namespace]);
      const failed = job?.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
      if (failed) {
        const logs = await cluster.kubectl(['logs', `job/${name}`, '-n', namespace]);
        throw new Error(`Job ${name} failed: ${failed.message}\n${logs.stdout}${logs.stderr}`);
      }
      if (!job?.status?.succeeded) return undefined;
      return {
        finishedAt: performance.now(),
        startTime: job.status.startTime,
        completionTime: job.status.completionTime,
      };
    },
    { timeoutMs, intervalMs: 250 },
  );
}

/** Waits for a custom object's status.phase to be one of `done`; throws on one of `failed`. */
export async function phaseReached<T extends { status?: { phase?: string; message?: string } }>(
  cluster: E2eCluster,
  resource: string,
  namespace: string,
  name: string,
  done: readonly string[],
  failed: readonly string[],
  timeoutMs: number,
): Promise<{ at: number; object: T }> {
  return pollUntil(
    `${resource} ${name} ${done.join('/')}`,
    async () => {
      const object = await kubectlJson<T>(cluster, ['get', resource, name, '-n', namespace]);
      const phase = object?.status?.phase;
      if (phase && failed.includes(phase))
        throw new Error(`${resource} ${name} ${phase}: ${object?.status?.message ?? ''}`);
      return phase && done.includes(phase) ? { at: performance.now(), object: object! } : undefined;
    },
    { timeoutMs, intervalMs: 250 },
  );
}

/** Seconds between two RFC 3339 times a Job reports (whole seconds). */
export const spanSeconds = (from?: string, to?: string): number | undefined =>
  from && to ? (Date.parse(to) - Date.parse(from)) / 1000 : undefined;

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
