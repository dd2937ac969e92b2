import { mergeFlags } from './flags.ts';
import { type LogSink, ManagedProcess } from './process.ts';

/**
 * The kube-controller-manager controllers that make workloads behave as in a real cluster. Left out: node
 * lifecycle (kwok keeps leases fresh anyway), IPAM, cloud, CSR signing and attach/detach, which need a
 * kubelet or cloud to be meaningful.
 */
export const workloadControllers = [
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'clusterrole-aggregation-controller',
  'replicaset-controller',
  'deployment-controller',
  'statefulset-controller',
  'daemonset-controller',
  'job-controller',
  'cronjob-controller',
  'ttl-after-finished-controller',
  'disruption-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'persistentvolume-binder-controller',
  'persistentvolume-protection-controller',
  'persistentvolumeclaim-protection-controller',
  'pod-garbage-collector-controller',
] as const;

/** With a real node: kubelet registers it tainted not-ready, and this controller lifts the taint once it is Ready. */
export const realNodeControllers = ['node-lifecycle-controller'] as const;

/**
 * Client rate limits for kube-controller-manager and kube-scheduler (flags both accept; the scheduler's are
 * deprecated in favour of its config file, which the harness does not write).
 */
export const clientRateArgs = ['--kube-api-qps=500', '--kube-api-burst=1000'] as const;

export interface ControllerManagerOptions {
  readonly binary: string;
  /** Default: workloadControllers. */
  readonly controllers?: readonly string[];
  readonly kubeconfig: string;
  readonly caCert: string;
  readonly serviceClusterIpRange: string;
  readonly extraArgs?: readonly string[];
  readonly log?: LogSink;
}

export function startControllerManager(options: ControllerManagerOptions): ManagedProcess {
  const args = mergeFlags(
    [
      `--kubeconfig=${options.kubeconfig}`,
      `--controllers=${(options.controllers ?? workloadControllers).join(',')}`,
      '--leader-elect=false',
      '--use-service-account-credentials=false',
      `--root-ca-file=${options.caCert}`,
      `--service-cluster-ip-range=${options.serviceClusterIpRange}`,
      // Nothing scrapes it; not serving avoids a port and delegated-authn lookups at start-up.
      '--secure-port=0',
      '--profiling=false',
      // client-go's default of 20 requests/s (burst 30) makes 500 StatefulSets take minutes to get their pods
      // and claims; the apiserver is local and has room for more.
      ...clientRateArgs,
    ],
    options.extraArgs ?? [],
  );
  return new ManagedProcess('kube-controller-manager', options.binary, args, options.log);
}
