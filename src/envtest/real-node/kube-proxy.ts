// kube-proxy (iptables mode) for ClusterIP Services on the real node. It leaves the machine's conntrack limits and
// timeouts alone (0 = keep) and does not open NodePorts on localhost (no route_localnet). Its rules are removed with
// everything else when the teardown restores the saved iptables rule set.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManagedProcess } from '../process.ts';
import { type AgentOptions, startAgent } from './agent.ts';
import { NODE_ADDRESS, POD_SUBNET } from './network.ts';

export interface KubeProxyOptions extends AgentOptions {
  readonly nodeName: string;
  readonly healthzPort: number;
  readonly metricsPort: number;
}

export async function startKubeProxy(options: KubeProxyOptions): Promise<ManagedProcess> {
  const dir = join(options.workDir, 'kube-proxy');
  await mkdir(dir, { recursive: true });
  const config = {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: options.kubeconfig },
    hostnameOverride: options.nodeName,
    bindAddress: NODE_ADDRESS,
    mode: 'iptables',
    clusterCIDR: POD_SUBNET,
    detectLocalMode: 'ClusterCIDR',
    healthzBindAddress: `127.0.0.1:${options.healthzPort}`,
    metricsBindAddress: `127.0.0.1:${options.metricsPort}`,
    nodePortAddresses: [`${NODE_ADDRESS}/32`],
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    iptables: { localhostNodePorts: false, masqueradeAll: false, syncPeriod: '30s', minSyncPeriod: '0s' },
    logging: { format: 'text' },
  };
  const configPath = join(dir, 'config.yaml');
  await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`);
  return startAgent('kube-proxy', options, [`--config=${configPath}`, '--v=1']);
}
