import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ControlPlane, type KubectlResult, runKubectl } from '../../../src/envtest/index.ts';

export const sharedKubeconfigVariable = 'SAMPLEDB_IT_KUBECONFIG';
export const sharedBinDirVariable = 'SAMPLEDB_IT_BIN_DIR';

/** What test files may use of the shared control plane (fault injection needs a ControlPlane of its own). */
export interface TestCluster {
  readonly kubeconfigPath: string;
  readonly binDir: string;
  kubeConfig(): KubeConfig;
  kubectl(args: readonly string[], options?: { input?: string }): Promise<KubectlResult>;
}

export class AttachedCluster implements TestCluster {
  readonly kubeconfigPath: string;
  readonly binDir: string;

  constructor(kubeconfigPath: string, binDir: string) {
    this.kubeconfigPath = kubeconfigPath;
    this.binDir = binDir;
  }

  kubeConfig(): KubeConfig {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(this.kubeconfigPath);
    return kubeConfig;
  }

  kubectl(args: readonly string[], options?: { input?: string }): Promise<KubectlResult> {
    return runKubectl(join(this.binDir, 'kubectl'), this.kubeconfigPath, args, options);
  }
}

let own: Promise<TestCluster> | undefined;

/**
 * The control plane (with controllers, scheduler and kwok) shared by the integration tests. Under
 * `npm run test:integration` it was started once by global-setup.ts; when a file runs on its own
 * (`node --test test/integration/x.test.ts`) this starts one for the file and stops it after the file.
 * Call it at module top level, so the stop hook belongs to the file rather than to one test.
 */
export function sharedCluster(): Promise<TestCluster> {
  const kubeconfigPath = process.env[sharedKubeconfigVariable];
  const binDir = process.env[sharedBinDirVariable];
  if (kubeconfigPath && binDir) return Promise.resolve(new AttachedCluster(kubeconfigPath, binDir));
  if (!own) {
    const starting = ControlPlane.start({ workloads: true });
    after(async () => (await starting).stop());
    own = starting;
  }
  return own;
}

/** Creates a namespace with a random suffix (tests share the cluster) and deletes it after the file. */
export async function testNamespace(
  cluster: TestCluster,
  prefix: string,
  labels: Record<string, string> = {},
): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  const core = cluster.kubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name, labels } } });
  after(async () => {
    await core.deleteNamespace({ name }).catch(() => {});
  });
  return name;
}
