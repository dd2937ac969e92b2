// The real node the e2e tests run on, with the operator installed from dist/ as a user would: started once by
// global-setup.ts for `npm run test:e2e`, or by the first test file that runs alone
// (`./node_modules/.bin/node --test test/e2e/database.test.ts`), which stops it after the file.
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { after } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { ControlPlane } from '../../../src/envtest/index.ts';
import { AttachedCluster, type TestCluster } from '../../integration/support/cluster.ts';
import { installOperator } from './install.ts';

const kubeconfigVariable = 'SAMPLEDB_E2E_KUBECONFIG';
const binDirVariable = 'SAMPLEDB_E2E_BIN_DIR';
const operatorImageVariable = 'SAMPLEDB_E2E_OPERATOR_IMAGE';
/** SAMPLEDB_E2E_NETWORK_POLICY=1: the real node enforces NetworkPolicy (the netpol agent; off by default). */
export const e2eNetworkPolicy = process.env.SAMPLEDB_E2E_NETWORK_POLICY === '1';
const auditLogVariable = 'SAMPLEDB_E2E_AUDIT_LOG';
/** Seconds to wait for another real node on this machine (one per machine) before giving up; default 0. */
export const nodeWaitVariable = 'SAMPLEDB_REAL_NODE_WAIT';

export interface E2eCluster extends TestCluster {
  /** The operator image dist/ runs, by digest: localhost/sampledb-operator@sha256:... */
  readonly operatorImage: string;
}

class Attached extends AttachedCluster implements E2eCluster {
  readonly operatorImage: string;

  constructor(kubeconfigPath: string, binDir: string, operatorImage: string) {
    super(kubeconfigPath, binDir);
    this.operatorImage = operatorImage;
  }
}

export function lockWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env[nodeWaitVariable] ?? '0');
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new Error(`${nodeWaitVariable} must be a number of seconds`);
  return seconds * 1000;
}

/** Starts a real node and installs dist/ on it; the caller stops the returned plane. */
export async function startE2eCluster(): Promise<{ plane: ControlPlane; cluster: E2eCluster }> {
  const plane = await ControlPlane.start({
    node: 'real',
    realNode: { lockWaitMs: lockWaitMs(), networkPolicy: e2eNetworkPolicy },
    auditLog: true,
    log: nodeLog(),
  });
  try {
    const operator = plane.node!.image('operator');
    const operatorImage = operator.refs.find((ref) => ref.includes('@sha256:'))!;
    const cluster = new Attached(plane.kubeconfigPath, plane.binDir, operatorImage);
    await installOperator(cluster);
    return { plane, cluster };
  } catch (error) {
    await plane.stop();
    throw error;
  }
}

export function exportCluster(cluster: E2eCluster, auditLogPath?: string): void {
  if (auditLogPath) process.env[auditLogVariable] = auditLogPath;
  process.env[kubeconfigVariable] = cluster.kubeconfigPath;
  process.env[binDirVariable] = cluster.binDir;
  process.env[operatorImageVariable] = cluster.operatorImage;
}

/** Every line the cluster's processes print goes to .sampledb/e2e-cluster.log (kept after the run, gitignored). */
export function nodeLog(): (line: string) => void {
  const dir = resolve(process.env.SAMPLEDB_STATE_DIR ?? '.sampledb');
  mkdirSync(dir, { recursive: true });
  const file = createWriteStream(resolve(dir, 'e2e-cluster.log'), { flags: 'w' });
  return (line) => file.write(`${line}\n`);
}

let own: Promise<E2eCluster> | undefined;
let ownAuditLog: Promise<string | undefined> | undefined;

/**
 * The apiserver's audit log (Metadata level) of the node the tests run on, and whether this file started that node
 * itself (run alone: only its own requests are in it) rather than sharing the suite's. Call after e2eCluster().
 */
export async function e2eAuditLog(): Promise<{ path: string; ownNode: boolean } | undefined> {
  const shared = process.env[auditLogVariable];
  if (shared) return { path: shared, ownNode: false };
  const path = await ownAuditLog;
  return path ? { path, ownNode: true } : undefined;
}

/** Call at module top level, so the stop hook belongs to the file. */
export function e2eCluster(): Promise<E2eCluster> {
  const kubeconfig = process.env[kubeconfigVariable];
  const binDir = process.env[binDirVariable];
  const image = process.env[operatorImageVariable];
  if (kubeconfig && binDir && image) return Promise.resolve(new Attached(kubeconfig, binDir, image));
  if (!own) {
    const starting = startE2eCluster();
    after(async () => (await starting).plane.stop());
    ownAuditLog = starting.then((s) => s.plane.auditLogPath);
    own = starting.then((s) => s.cluster);
  }
  return own;
}

/** A namespace labelled PodSecurity `restricted` (as production namespaces are), deleted after the file. */
export async function e2eNamespace(cluster: E2eCluster, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  const core = cluster.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespace({
    body: { metadata: { name, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
  });
  after(async () => {
    await core.deleteNamespace({ name }).catch(() => {});
  });
  return name;
}

/** The shared cluster and a namespace of the file's own: what every e2e test file starts with. */
export async function e2eSetup(prefix: string): Promise<{ cluster: E2eCluster; namespace: string }> {
  const cluster = await e2eCluster();
  return { cluster, namespace: await e2eNamespace(cluster, prefix) };
}
