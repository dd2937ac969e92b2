// NetworkPolicy enforcement on the real node: test/controlplane/netpol (kube-network-policies' dataplane) runs on
// the machine like kube-proxy and judges the first packet of every connection between pods against the
// NetworkPolicies, so the node behaves like a cluster whose CNI enforces them (isolate-primary needs one).
//
// Upstream hands packets to its queue with an nftables `queue` rule, which these machines' kernel does not have
// (nft answers ENOENT; it is built without NFT_QUEUE). The iptables NFQUEUE target works (nft_compat), so the
// harness adds that rule itself, and upstream's own sync only logs its failure. The rule sits in mangle FORWARD:
// the agent's accept then goes on to the filter table, where the pod network's isolation rules still apply.
// Traffic from the machine itself (kubelet's probes, the tests' own clients) passes OUTPUT, not FORWARD, and is not
// judged, as upstream. The teardown restores the saved rule set, which removes the chain.
import type { ManagedProcess } from '../process.ts';
import { type AgentOptions, startAgent } from './agent.ts';
import { command } from './host.ts';

export const NETPOL_QUEUE = 100;
const CHAIN = 'SAMPLEDB-NETPOL';

export interface NetpolOptions extends AgentOptions {
  readonly nodeName: string;
}

export function startNetpolAgent(options: NetpolOptions): ManagedProcess {
  return startAgent('netpol', options, [
    `-kubeconfig=${options.kubeconfig}`,
    `-node-name=${options.nodeName}`,
    `-nfqueue-id=${NETPOL_QUEUE}`,
    '-v=1',
  ]);
}

/**
 * Sends the first packet of every new forwarded connection (pod to pod, pod to a Service's pod) to the agent's
 * queue. `--queue-bypass`: while no agent listens, packets pass unjudged, so a dead agent leaves the node without
 * enforcement instead of without a network; isolate-primary's own check then finds nothing enforced and refuses.
 */
export async function queuePodConnections(): Promise<void> {
  await command('iptables', ['-t', 'mangle', '-N', CHAIN]);
  await command('iptables', [
    '-t',
    'mangle',
    '-A',
    CHAIN,
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-j',
    'NFQUEUE',
    '--queue-num',
    String(NETPOL_QUEUE),
    '--queue-bypass',
  ]);
  await command('iptables', ['-t', 'mangle', '-I', 'FORWARD', '1', '-j', CHAIN]);
}
