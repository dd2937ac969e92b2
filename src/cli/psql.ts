// `kubectl sampledb psql <name>`: psql through a port-forward to the primary's pod, with the binding Secret's
// credentials. The plan (which pod, which Secret, psql's environment) is pure; the password goes to psql in
// PGPASSWORD, never on a command line or in output.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { CoreV1Api, type KubeConfig, PortForward } from '@kubernetes/client-node';
import { POSTGRES_PORT } from '../api/identity.ts';
import type { SampleDbObject } from '../api/sampledb.ts';

export class PsqlError extends Error {}

export interface PsqlPlan {
  secret: string;
  pod: string;
}

/** Which Secret holds the credentials and which pod to forward to (the elected primary, else pod 0). */
export function psqlPlan(db: SampleDbObject): PsqlPlan {
  const name = db.metadata?.name ?? '';
  const secret = db.status?.binding?.name;
  if (!secret)
    throw new PsqlError(
      `SampleDB "${name}" reports no binding Secret yet (status.binding); wait until it is Ready (kubectl sampledb status ${name})`,
    );
  return { secret, pod: db.status?.replication?.primary ?? `${name}-0` };
}

/** psql's environment from the binding Secret's data (base64, as the API returns it) and the forwarded port. */
export function psqlEnv(
  data: Record<string, string> | undefined,
  secret: string,
  port: number,
): Record<string, string> {
  const decoded = (key: string) => {
    const value = data?.[key];
    if (!value) throw new PsqlError(`Secret "${secret}" has no "${key}"`);
    return Buffer.from(value, 'base64').toString('utf8');
  };
  return {
    PGHOST: '127.0.0.1',
    PGPORT: String(port),
    PGUSER: decoded('username'),
    PGPASSWORD: decoded('password'),
    PGDATABASE: decoded('database'),
  };
}

/** Forwards a local port to the pod, runs psql (from PATH, or $PSQL) on the terminal, and returns its exit code. */
export async function runPsql(
  kubeConfig: KubeConfig,
  namespace: string,
  db: SampleDbObject,
  processEnv: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const plan = psqlPlan(db);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const secret = await core.readNamespacedSecret({ name: plan.secret, namespace });
  const forward = new PortForward(kubeConfig);
  const server = createServer((socket) => {
    forward
      .portForward(namespace, plan.pod, [POSTGRES_PORT], socket, null, socket)
      .catch((error: unknown) => {
        process.stderr.write(
          `error: port-forward to pod ${plan.pod}: ${error instanceof Error ? error.message : error}\n`,
        );
        socket.destroy();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  try {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const env = { ...processEnv, ...psqlEnv(secret.data, plan.secret, port) };
    return await new Promise<number>((resolve, reject) => {
      const child = spawn(processEnv.PSQL ?? 'psql', [], { env, stdio: 'inherit' });
      child.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new PsqlError(
            error.code === 'ENOENT'
              ? 'psql is not on PATH (install the PostgreSQL client, or set PSQL)'
              : error.message,
          ),
        ),
      );
      child.once('exit', (code) => resolve(code ?? 1));
    });
  } finally {
    server.close();
  }
}
