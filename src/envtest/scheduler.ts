import { mergeFlags } from './flags.ts';
import { type LogSink, ManagedProcess } from './process.ts';

export interface SchedulerOptions {
  readonly binary: string;
  readonly kubeconfig: string;
  readonly extraArgs?: readonly string[];
  readonly log?: LogSink;
}

export function startScheduler(options: SchedulerOptions): ManagedProcess {
  const args = mergeFlags(
    [
      `--kubeconfig=${options.kubeconfig}`,
      `--authentication-kubeconfig=${options.kubeconfig}`,
      `--authorization-kubeconfig=${options.kubeconfig}`,
      '--leader-elect=false',
      '--secure-port=0',
      '--profiling=false',
    ],
    options.extraArgs ?? [],
  );
  return new ManagedProcess('kube-scheduler', options.binary, args, options.log);
}
