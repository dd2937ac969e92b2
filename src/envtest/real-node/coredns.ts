// Cluster DNS for the real node: CoreDNS (built with only the plugins used here, test/controlplane/coredns) runs on
// the machine, listening on the bridge address, and the kube-dns Service (DNS_SERVICE_IP, the pods' nameserver)
// points at it through an EndpointSlice, so pods resolve <service>.<namespace>.svc.cluster.local as in any cluster.
// There is no upstream: names outside the cluster do not resolve, and no query leaves the machine.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiException, CoreV1Api, DiscoveryV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ManagedProcess } from '../process.ts';
import { type AgentOptions, startAgent } from './agent.ts';
import { CLUSTER_DOMAIN, DNS_SERVICE_IP, NODE_ADDRESS } from './network.ts';

export interface CorednsOptions extends AgentOptions {
  readonly healthPort: number;
  readonly readyPort: number;
}

export async function startCoredns(options: CorednsOptions): Promise<ManagedProcess> {
  const dir = join(options.workDir, 'coredns');
  await mkdir(dir, { recursive: true });
  const corefile = [
    '.:53 {',
    `    bind ${NODE_ADDRESS}`,
    '    errors',
    `    health 127.0.0.1:${options.healthPort}`,
    `    ready 127.0.0.1:${options.readyPort}`,
    `    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {`,
    `        kubeconfig ${options.kubeconfig}`,
    '        pods insecure',
    '        fallthrough in-addr.arpa ip6.arpa',
    '        ttl 5',
    '    }',
    '    cache 5',
    '    loadbalance',
    '}',
    '',
  ].join('\n');
  const corefilePath = join(dir, 'Corefile');
  await writeFile(corefilePath, corefile);
  return startAgent('coredns', options, ['-conf', corefilePath]);
}

const exists = (error: unknown) => error instanceof ApiException && error.code === 409;

/** The kube-dns Service in kube-system, without a selector, and its EndpointSlice pointing at CoreDNS. */
export async function publishDnsService(kubeConfig: KubeConfig): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
  const ports = [
    { name: 'dns', port: 53, protocol: 'UDP' },
    { name: 'dns-tcp', port: 53, protocol: 'TCP' },
  ];
  try {
    await core.createNamespacedService({
      namespace: 'kube-system',
      body: {
        metadata: { name: 'kube-dns', labels: { 'k8s-app': 'kube-dns' } },
        spec: { clusterIP: DNS_SERVICE_IP, ports: ports.map((p) => ({ ...p, targetPort: 53 })) },
      },
    });
  } catch (error) {
    if (!exists(error)) throw error;
  }
  try {
    await discovery.createNamespacedEndpointSlice({
      namespace: 'kube-system',
      body: {
        metadata: {
          name: 'kube-dns-envtest',
          labels: {
            'kubernetes.io/service-name': 'kube-dns',
            'endpointslice.kubernetes.io/managed-by': 'envtest.local',
          },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: [NODE_ADDRESS], conditions: { ready: true } }],
        ports,
      },
    });
  } catch (error) {
    if (!exists(error)) throw error;
  }
}
