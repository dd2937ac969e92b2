// The real node's pod network: one bridge inside the machine, no NAT and no route out. Pods get an address in
// POD_SUBNET and routes only to it and to the Service range; a FORWARD rule drops anything that would still leave
// the bridge for another interface, so nothing a pod sends reaches an address this harness did not create.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { command } from './host.ts';

export const BRIDGE = 'sdbnode0';
export const POD_SUBNET = '10.244.0.0/24';
/** The bridge's own address: the pods' gateway, and where the apiserver, kubelet and CoreDNS listen for them. */
export const NODE_ADDRESS = '10.244.0.1';
export const SERVICE_CIDR = '10.96.0.0/12';
export const DNS_SERVICE_IP = '10.96.0.10';
export const CLUSTER_DOMAIN = 'cluster.local';
export const CNI_BIN_DIR = '/usr/lib/cni';
const NETWORK_NAME = 'sampledb-node';

export async function bridgeExists(): Promise<boolean> {
  try {
    await command('ip', ['link', 'show', BRIDGE]);
    return true;
  } catch {
    return false;
  }
}

/** Creates the bridge with the gateway address (the apiserver binds to it before the CNI plugin first runs). */
export async function createBridge(): Promise<void> {
  await command('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
  await command('ip', ['addr', 'add', `${NODE_ADDRESS}/24`, 'dev', BRIDGE]);
  await command('ip', ['link', 'set', BRIDGE, 'up']);
}

/** Pod traffic may only stay on the bridge. The teardown restores the saved rule set, which removes these. */
export async function isolatePodNetwork(): Promise<void> {
  await command('iptables', ['-I', 'FORWARD', '1', '-s', POD_SUBNET, '!', '-o', BRIDGE, '-j', 'DROP']);
  await command('iptables', ['-I', 'FORWARD', '1', '-d', POD_SUBNET, '!', '-i', BRIDGE, '-j', 'DROP']);
}

/** The CNI configuration containerd's CRI plugin reads: bridge + host-local IPAM, leases kept in the work dir. */
export async function writeCniConfig(confDir: string, ipamDir: string): Promise<void> {
  await mkdir(confDir, { recursive: true });
  const conflist = {
    cniVersion: '1.0.0',
    name: NETWORK_NAME,
    plugins: [
      {
        type: 'bridge',
        bridge: BRIDGE,
        isGateway: true,
        isDefaultGateway: false,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: POD_SUBNET, gateway: NODE_ADDRESS }]],
          // No default route: only the Service range, through the gateway where kube-proxy translates it.
          routes: [{ dst: SERVICE_CIDR }],
          dataDir: ipamDir,
        },
      },
    ],
  };
  await writeFile(join(confDir, '10-sampledb-node.conflist'), `${JSON.stringify(conflist, null, 2)}\n`);
}
