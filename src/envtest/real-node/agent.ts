// What every node agent (kubelet, kube-proxy, CoreDNS) is started with, and how: through the wrapper that moves it
// into the node's cgroup tree, where the teardown finds it.
import { type LogSink, ManagedProcess } from '../process.ts';

export interface AgentOptions {
  readonly binary: string;
  /** `sh -c <join the runtime cgroup> sh`: the agent's command line follows. */
  readonly wrapper: readonly string[];
  readonly workDir: string;
  /** The admin kubeconfig (the agents act as system:masters on this test cluster). */
  readonly kubeconfig: string;
  readonly log?: LogSink;
}

export function startAgent(name: string, options: AgentOptions, args: readonly string[]): ManagedProcess {
  const [shell, ...prefix] = options.wrapper;
  if (!shell) throw new Error('empty wrapper');
  return new ManagedProcess(name, shell, [...prefix, options.binary, ...args], options.log);
}
