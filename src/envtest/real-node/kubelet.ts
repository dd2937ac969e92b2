// kubelet for the real node. Its configuration is what these machines need (cgroup v1 with failCgroupV1: false,
// cgroupfs under the node's own tree, containerd's socket in the work dir) and what keeps a test node predictable:
// no image garbage collection (the images are imported, not pullable), eviction only when the machine is really
// out of memory or disk, no read-only port, x509 client authentication by the control plane's CA.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManagedProcess } from '../process.ts';
import { type AgentOptions, startAgent } from './agent.ts';
import { CLUSTER_DOMAIN, DNS_SERVICE_IP, NODE_ADDRESS } from './network.ts';

export const NODE_NAME = 'sampledb-node';

export interface KubeletOptions extends AgentOptions {
  readonly caCert: string;
  readonly containerdSocket: string;
  readonly cgroupRoot: string;
  readonly port: number;
  readonly healthzPort: number;
}

export async function startKubelet(options: KubeletOptions): Promise<ManagedProcess> {
  const dir = join(options.workDir, 'kubelet');
  const endpoint = `unix://${options.containerdSocket}`;
  await mkdir(dir, { recursive: true });
  // Pods' resolv.conf gets only the cluster DNS: no search domains or servers of the machine's own.
  const resolvConf = join(dir, 'resolv.conf');
  await writeFile(resolvConf, '');
  const config = {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: NODE_ADDRESS,
    port: options.port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: options.healthzPort,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: false },
      x509: { clientCAFile: options.caCert },
    },
    authorization: { mode: 'AlwaysAllow' },
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: options.cgroupRoot,
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ['pods'],
    containerRuntimeEndpoint: endpoint,
    imageServiceEndpoint: endpoint,
    clusterDNS: [DNS_SERVICE_IP],
    clusterDomain: CLUSTER_DOMAIN,
    resolvConf,
    failSwapOn: false,
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'nodefs.inodesFree': '1%',
      'imagefs.available': '1%',
    },
    podLogsDir: join(dir, 'pod-logs'),
    volumePluginDir: join(dir, 'volume-plugins'),
    enableControllerAttachDetach: false,
    serializeImagePulls: false,
    registerNode: true,
    rotateCertificates: false,
    serverTLSBootstrap: false,
    protectKernelDefaults: false,
    syncFrequency: '10s',
    nodeStatusUpdateFrequency: '5s',
    shutdownGracePeriod: '0s',
    logging: { format: 'text' },
  };
  const configPath = join(dir, 'config.yaml');
  await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`);
  const args = [
    `--config=${configPath}`,
    `--kubeconfig=${options.kubeconfig}`,
    `--root-dir=${join(dir, 'root')}`,
    `--cert-dir=${join(dir, 'pki')}`,
    `--node-ip=${NODE_ADDRESS}`,
    `--hostname-override=${NODE_NAME}`,
    '--v=1',
  ];
  return startAgent('kubelet', options, args);
}
