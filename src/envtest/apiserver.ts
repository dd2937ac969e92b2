import { auditArgs } from './audit.ts';
import { mergeFlags } from './flags.ts';
import type { AdminHttpsClient } from './https.ts';
import type { Pki } from './pki.ts';
import { type LogSink, ManagedProcess } from './process.ts';
import { pollUntil } from './wait.ts';

export interface ApiserverOptions {
  readonly binary: string;
  /** Where it listens and what it advertises (the `kubernetes` Service's endpoint). Default 127.0.0.1. */
  readonly address?: string;
  readonly port: number;
  readonly etcdUrl: string;
  readonly pki: Pki;
  readonly serviceClusterIpRange: string;
  /**
   * ServiceAccount admission rejects pods until the namespace's `default` ServiceAccount exists; without
   * kube-controller-manager nothing creates it, so (like envtest) it is disabled then.
   */
  readonly serviceAccountAdmission: boolean;
  /** Write an audit log: the policy file (see audit.ts) and the JSON log file. */
  readonly audit?: { readonly policyFile: string; readonly logFile: string };
  readonly extraArgs?: readonly string[];
  readonly log?: LogSink;
}

/** envtest's kube-apiserver flag set: secure port only, RBAC, PodSecurity admission (on by default). */
export function apiserverArgs(options: ApiserverOptions): string[] {
  const { pki } = options;
  return mergeFlags(
    [
      `--advertise-address=${options.address ?? '127.0.0.1'}`,
      `--bind-address=${options.address ?? '127.0.0.1'}`,
      `--secure-port=${options.port}`,
      `--etcd-servers=${options.etcdUrl}`,
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=RBAC',
      '--enable-admission-plugins=PodSecurity',
      ...(options.serviceAccountAdmission ? [] : ['--disable-admission-plugins=ServiceAccount']),
      `--service-cluster-ip-range=${options.serviceClusterIpRange}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPublicKey}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      '--allow-privileged=true',
      '--profiling=false',
      ...(options.audit ? auditArgs(options.audit.policyFile, options.audit.logFile) : []),
    ],
    options.extraArgs ?? [],
  );
}

/** Runs kube-apiserver; can be restarted with identical flags (same etcd, certificates and port). */
export class Apiserver {
  readonly url: string;
  readonly #args: string[];
  readonly #options: ApiserverOptions;
  readonly #client: AdminHttpsClient;
  #process: ManagedProcess | undefined;

  constructor(options: ApiserverOptions, client: AdminHttpsClient) {
    this.#options = options;
    this.#client = client;
    this.#args = apiserverArgs(options);
    this.url = `https://${options.address ?? '127.0.0.1'}:${options.port}`;
  }

  get process(): ManagedProcess | undefined {
    return this.#process;
  }

  async start(): Promise<void> {
    if (this.#process?.running) throw new Error('kube-apiserver is already running');
    const process = new ManagedProcess('kube-apiserver', this.#options.binary, this.#args, this.#options.log);
    this.#process = process;
    await pollUntil(
      'kube-apiserver /readyz',
      async () => {
        const { status } = await this.#client.get(`${this.url}/readyz`, 2000);
        return status === 200 ? true : undefined;
      },
      { timeoutMs: 60_000, failFast: () => (process.running ? undefined : process.describeExit()) },
    );
  }

  async stop(graceMs?: number): Promise<void> {
    await this.#process?.stop(graceMs);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  pause(): void {
    this.#process?.signal('SIGSTOP');
  }

  resume(): void {
    this.#process?.signal('SIGCONT');
  }
}
