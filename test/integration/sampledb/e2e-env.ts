// The environment of the SampleDB end-to-end tests: a control plane of their own (kwok leaves backup pods, and every
// pod in "manual-*" namespaces, to the test's FakeKubelet), the CRDs and the operator manifests from dist/ (RBAC and
// the deletion-protection admission policy), a real PostgreSQL server for the data-path scripts, and the operator as
// a real process authenticated as its ServiceAccount, so it runs with exactly the permissions of src/api/permissions.ts.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ControlPlane, pollUntil } from '../../../src/envtest/index.ts';
import {
  KubeHttp,
  type KubeObject,
  NAMESPACES,
  type ResourceType,
  SERVICE_ACCOUNTS,
} from '../../../src/runtime/index.ts';
import { SAMPLEDBS } from '../../../src/sampledb/resources.ts';
import { type PostgresServer, startPostgres } from '../../support/postgres.ts';
import { FakeKubelet } from '../support/kubelet.ts';
import { crdManifests, distManifests, type Manifest } from '../support/manifests.ts';
import { OperatorProcess } from '../support/operator.ts';

export const OPERATOR_NAMESPACE = 'sampledb-system';
export const OPERATOR_SERVICE_ACCOUNT = 'sampledb-operator';
export const MANUAL_PREFIX = 'manual-';

export interface E2eEnv {
  plane: ControlPlane;
  http: KubeHttp;
  pg: PostgresServer;
  kubelet: FakeKubelet;
  /** Local directories standing in for PVCs, one per claim name (see script-pod.ts). */
  volumesDir: string;
  /** A kubeconfig that authenticates as the operator's ServiceAccount (a bound token). */
  operatorKubeconfig: string;
  /** `root`: another build of the operator (see OperatorProcess.start). */
  startOperator(root?: string): OperatorProcess;
  /** Stops everything this environment started, in reverse order. */
  stop(): Promise<void>;
  namespace(prefix: string): Promise<string>;
  kubectl(args: string[], input?: string): Promise<string>;
}

export {
  CONFIG_MAPS as CONFIGMAPS,
  JOBS,
  PERSISTENT_VOLUME_CLAIMS as PVCS,
  PODS,
  SECRETS,
  SERVICES,
  STATEFUL_SETS as STATEFULSETS,
} from '../../../src/runtime/index.ts';
export { SAMPLEDB_BACKUPS as BACKUPS, SAMPLEDBS } from '../../../src/sampledb/resources.ts';

async function apply(plane: ControlPlane, manifests: readonly Manifest[]): Promise<void> {
  const result = await plane.kubectl(['apply', '--server-side', '-f', '-'], {
    input: manifests.map((m) => JSON.stringify(m)).join('\n'),
  });
  if (result.code !== 0) throw new Error(`kubectl apply: ${result.stderr}`);
}

function tokenKubeconfig(dir: string, server: string, caData: string, token: string): string {
  const path = join(dir, 'operator.kubeconfig');
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'envtest', cluster: { server, 'certificate-authority-data': caData } }],
      users: [{ name: OPERATOR_SERVICE_ACCOUNT, user: { token } }],
      contexts: [{ name: 'operator', context: { cluster: 'envtest', user: OPERATOR_SERVICE_ACCOUNT } }],
      'current-context': 'operator',
    }),
    { mode: 0o600 },
  );
  return path;
}

export async function startE2eEnv(): Promise<E2eEnv> {
  const plane = await ControlPlane.start({
    workloads: true,
    kwokPodSelector: [
      {
        key: '.metadata.labels["app.kubernetes.io/component"]',
        operator: 'NotIn',
        values: ['backup', 'drill'],
      },
      { key: `.metadata.namespace | startswith("${MANUAL_PREFIX}")`, operator: 'NotIn', values: ['true'] },
    ],
  });
  const cleanups: Array<() => Promise<void>> = [() => plane.stop()];
  const stop = async () => {
    await OperatorProcess.killAll();
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  try {
    return await setUp(plane, cleanups, stop);
  } catch (err) {
    await stop();
    throw err;
  }
}

async function setUp(
  plane: ControlPlane,
  cleanups: Array<() => Promise<void>>,
  stop: () => Promise<void>,
): Promise<E2eEnv> {
  const pg = await startPostgres();
  cleanups.push(() => pg.stop());
  const http = new KubeHttp(plane.kubeConfig());
  cleanups.push(() => http.close());
  const kubelet = new FakeKubelet({
    kubeconfigPath: plane.kubeconfigPath,
    binDir: plane.binDir,
    kubeConfig: () => plane.kubeConfig(),
    kubectl: (args, options) => plane.kubectl(args, options),
  });
  kubelet.start();
  cleanups.push(() => kubelet.stop());

  await apply(plane, crdManifests());
  // RBAC and the admission policy exactly as synthesized; not the Deployment (the operator runs as a process here).
  const operatorManifests = distManifests('0001-sampledb-operator.k8s.yaml').filter(
    (m) => !['Deployment', 'PodDisruptionBudget', 'Service'].includes(m.kind),
  );
  await apply(plane, operatorManifests);
  await pollUntil(
    'CRDs established',
    async () => {
      await http.list(SAMPLEDBS);
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  const token = await plane.kubectl([
    'create',
    'token',
    OPERATOR_SERVICE_ACCOUNT,
    '-n',
    OPERATOR_NAMESPACE,
    '--duration=2h',
  ]);
  if (token.code !== 0) throw new Error(`kubectl create token: ${token.stderr}`);
  const cluster = plane.kubeConfig().getCurrentCluster();
  const dir = mkdtempSync(join(pg.scratchDir, 'e2e-'));
  const volumesDir = join(dir, 'volumes');
  const caData =
    cluster?.caData ??
    (cluster?.caFile ? (await import('node:fs')).readFileSync(cluster.caFile).toString('base64') : '');
  const operatorKubeconfig = tokenKubeconfig(dir, plane.server, caData, token.stdout.trim());

  return {
    plane,
    http,
    pg,
    kubelet,
    volumesDir,
    operatorKubeconfig,
    startOperator: (root?: string) =>
      OperatorProcess.start({ kubeconfigPath: operatorKubeconfig, ...(root ? { root } : {}) }),
    stop,
    async namespace(prefix: string) {
      const name = `${prefix}-${randomBytes(3).toString('hex')}`;
      await http.create(NAMESPACES, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
      } as KubeObject);
      // Pods need the namespace's default ServiceAccount (the ServiceAccount admission plugin is on).
      await pollUntil(
        `default ServiceAccount in ${name}`,
        async () => {
          await http.get(SERVICE_ACCOUNTS, { namespace: name, name: 'default' });
          return true;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      return name;
    },
    async kubectl(args: string[], input?: string) {
      const result = await plane.kubectl(args, input === undefined ? {} : { input });
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    },
  };
}

/** Polls (bounded) until `check` returns a value; the operator's log tail is in the error. */
export function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  operator?: OperatorProcess,
  timeoutMs = 60_000,
): Promise<T> {
  return pollUntil(what, check, { timeoutMs, intervalMs: 200 }).catch((err: unknown) => {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}\n--- operator log ---\n${operator?.tail(40) ?? ''}`,
    );
  });
}

export async function getOrUndefined<T extends KubeObject>(
  http: KubeHttp,
  rt: ResourceType,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  try {
    return await http.get<T>(rt, { namespace, name });
  } catch (err) {
    if ((err as { status?: number }).status === 404) return undefined;
    throw err;
  }
}
