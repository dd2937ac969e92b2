import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Apiserver } from './apiserver.ts';
import { METADATA_AUDIT_POLICY } from './audit.ts';
import {
  type BinaryPaths,
  baseBinaries,
  locateBinaries,
  nodeBinaries,
  workloadBinaries,
} from './binaries.ts';
import { trackDirectory, untrackDirectory } from './cleanup.ts';
import {
  clientRateArgs,
  realNodeControllers,
  startControllerManager,
  workloadControllers,
} from './controllers.ts';
import { Etcd } from './etcd.ts';
import { type AdminHttpsClient, adminHttpsClient } from './https.ts';
import { writeAdminKubeconfig } from './kubeconfig.ts';
import { type KubectlResult, runKubectl } from './kubectl.ts';
import { createFakeNodes, type KwokSelectorRequirement, startKwok } from './kwok.ts';
import { generatePki, type Pki } from './pki.ts';
import { freePorts } from './ports.ts';
import type { LogSink, ManagedProcess } from './process.ts';
import { SERVICE_CIDR } from './real-node/network.ts';
import { RealNode, type RealNodeOptions } from './real-node/node.ts';
import { parseRequestCounts, type RequestSeries } from './request-metrics.ts';
import { startScheduler } from './scheduler.ts';
import { VolumeBinder } from './volume-binder.ts';
import { pollUntil } from './wait.ts';

export interface ControlPlaneOptions {
  /** Also run kube-controller-manager, kube-scheduler, kwok with a fake node, and the volume binder. */
  readonly workloads?: boolean;
  /**
   * The node workloads run on (implies `workloads`). `kwok` (default): a fake node, pods are Ready without running
   * anything. `real`: kubelet, containerd, a CNI bridge, kube-proxy, CoreDNS and real volumes on this machine
   * (root, one per machine; see docs/testing.md), and the apiserver listens on the bridge address for the pods.
   */
  readonly node?: 'kwok' | 'real';
  /** Options of the real node (`node: 'real'`). */
  readonly realNode?: RealNodeOptions;
  /** Audit every request at Metadata level into `<dataDir>/audit.log` ({@link ControlPlane.auditLogPath}). */
  readonly auditLog?: boolean;
  /** Extra kube-apiserver flags; `--name=value` replaces the default of the same name. */
  readonly apiserverArgs?: readonly string[];
  readonly etcdArgs?: readonly string[];
  /** Receives every line the control-plane processes print, prefixed with `[process]`. */
  readonly log?: LogSink;
  /** Work directory (certificates, etcd data, kubeconfig). Kept on stop() when given; a temp dir otherwise. */
  readonly dataDir?: string;
  /**
   * Extra requirements a pod must meet for kwok to play its kubelet (Running/Ready; Job pods Succeeded). Pods that
   * do not meet them stay Pending on the fake node, for a test to drive as the kubelet would (workloads only).
   */
  readonly kwokPodSelector?: readonly KwokSelectorRequirement[];
  /** Names of the fake nodes kwok manages (workloads only). */
  readonly nodes?: readonly string[];
  /** Where KUBEBUILDER_ASSETS and TEST_ASSET_* are looked up. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const serviceClusterIpRange = SERVICE_CIDR;
const kubernetesServiceIp = '10.96.0.1';

/** logs, exec and port-forward: the apiserver calls kubelet at the node's InternalIP with the admin certificate. */
const kubeletClientArgs = (pki: Pki): string[] => [
  `--kubelet-client-certificate=${pki.adminCert}`,
  `--kubelet-client-key=${pki.adminKey}`,
  '--kubelet-preferred-address-types=InternalIP',
];

interface Parts {
  readonly workDir: string;
  readonly ownsWorkDir: boolean;
  readonly binaries: Partial<BinaryPaths>;
  etcd?: Etcd;
  apiserver?: Apiserver;
  https?: AdminHttpsClient;
  readonly workloads: ManagedProcess[];
  binder?: VolumeBinder;
  node?: RealNode;
}

/**
 * A real Kubernetes control plane on loopback: etcd and kube-apiserver (envtest's set-up), optionally with
 * kube-controller-manager, kube-scheduler and kwok so that workloads appear to run. Every process and the
 * temp dir are removed by stop(), and also when the host process exits or is interrupted.
 */
export class ControlPlane {
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly binDir: string;
  /** The apiserver's audit log (`auditLog: true`), read with readAuditLog(). */
  readonly auditLogPath: string | undefined;
  readonly #parts: Parts;
  #stopping: Promise<void> | undefined;

  private constructor(parts: Parts, kubeconfigPath: string, server: string, auditLogPath?: string) {
    this.#parts = parts;
    this.auditLogPath = auditLogPath;
    this.kubeconfigPath = kubeconfigPath;
    this.server = server;
    this.binDir = dirname(parts.binaries['kube-apiserver']!);
  }

  /** The real node (`node: 'real'`): its images' digests, its address, its volumes. */
  get node(): RealNode | undefined {
    return this.#parts.node;
  }

  static async start(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    const real = options.node === 'real';
    const workloads = (options.workloads ?? false) || real;
    const binaries = await locateBinaries({
      names: [...baseBinaries, ...(workloads ? workloadBinaries : []), ...(real ? nodeBinaries : [])].filter(
        (name) => !(real && name === 'kwok'),
      ),
      env: options.env ?? process.env,
    });
    const workDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'envtest-')));
    if (!options.dataDir) trackDirectory(workDir);
    const parts: Parts = { workDir, ownsWorkDir: !options.dataDir, binaries, workloads: [] };
    const [etcdPort, etcdPeerPort, apiserverPort] = (await freePorts(3)) as [number, number, number];
    const kubeconfigPath = join(workDir, 'kubeconfig');
    let node: RealNode | undefined;
    try {
      node = real
        ? await RealNode.prepare({ ...options.realNode, ...(options.log ? { log: options.log } : {}) })
        : undefined;
    } catch (error) {
      await rm(workDir, { recursive: true, force: true });
      throw error;
    }
    parts.node = node;
    // On a real node pods reach the apiserver (the `kubernetes` Service) at the bridge address, so it listens there.
    const address = node?.address ?? '127.0.0.1';
    const audit = options.auditLog
      ? { policyFile: join(workDir, 'audit-policy.json'), logFile: join(workDir, 'audit.log') }
      : undefined;
    const plane = new ControlPlane(
      parts,
      kubeconfigPath,
      `https://${address}:${apiserverPort}`,
      audit?.logFile,
    );
    // Tracked before awaiting, so a failure elsewhere still lets stop() find a started etcd.
    let starting: Promise<unknown>[] = [];
    try {
      await Promise.all([
        mkdir(join(workDir, 'pki'), { recursive: true }),
        mkdir(join(workDir, 'etcd')),
        audit ? writeFile(audit.policyFile, JSON.stringify(METADATA_AUDIT_POLICY)) : undefined,
      ]);
      const pkiReady = generatePki(join(workDir, 'pki'), kubernetesServiceIp, node ? [node.address] : []);
      const etcdReady = Etcd.start({
        binary: binaries.etcd!,
        dataDir: join(workDir, 'etcd'),
        clientPort: etcdPort,
        peerPort: etcdPeerPort,
        extraArgs: options.etcdArgs,
        log: options.log,
      }).then((etcd) => {
        parts.etcd = etcd;
        return etcd;
      });
      starting = [pkiReady, etcdReady];
      const [pki, etcd] = await Promise.all([pkiReady, etcdReady]);
      parts.https = await adminHttpsClient(pki);
      parts.apiserver = new Apiserver(
        {
          binary: binaries['kube-apiserver']!,
          address,
          port: apiserverPort,
          etcdUrl: etcd.url,
          pki,
          serviceClusterIpRange,
          serviceAccountAdmission: workloads,
          ...(audit ? { audit } : {}),
          extraArgs: [...(node ? kubeletClientArgs(pki) : []), ...(options.apiserverArgs ?? [])],
          log: options.log,
        },
        parts.https,
      );
      await Promise.all([parts.apiserver.start(), writeAdminKubeconfig(kubeconfigPath, plane.server, pki)]);
      if (workloads) await plane.#startWorkloads(pki, options);
      return plane;
    } catch (error) {
      await Promise.allSettled(starting);
      await plane.stop();
      throw error;
    }
  }

  async #startWorkloads(pki: Pki, options: ControlPlaneOptions): Promise<void> {
    const { binaries, workloads, workDir, node } = this.#parts;
    const kubeconfig = this.kubeconfigPath;
    workloads.push(
      startControllerManager({
        binary: binaries['kube-controller-manager']!,
        kubeconfig,
        caCert: pki.caCert,
        serviceClusterIpRange,
        ...(node ? { controllers: [...workloadControllers, ...realNodeControllers] } : {}),
        log: options.log,
      }),
      startScheduler({
        binary: binaries['kube-scheduler']!,
        kubeconfig,
        extraArgs: clientRateArgs,
        log: options.log,
      }),
    );
    if (!node) {
      workloads.push(
        await startKwok({
          binary: binaries.kwok!,
          kubeconfig,
          workDir,
          log: options.log,
          ...(options.kwokPodSelector ? { podSelector: options.kwokPodSelector } : {}),
        }),
      );
    }
    const failFast = (): string | undefined => workloads.find((p) => !p.running)?.describeExit();
    const kubeConfig = this.kubeConfig();
    const binder = new VolumeBinder(kubeConfig, {
      onError: (error) => options.log?.(`[volume-binder] ${String(error)}`),
      ...(node ? { backend: node.volumes } : {}),
    });
    this.#parts.binder = binder;
    await binder.installDefaultStorageClass();
    binder.start();
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await Promise.all([
      node
        ? node.start({
            binaries: {
              kubelet: binaries.kubelet!,
              'kube-proxy': binaries['kube-proxy']!,
              coredns: binaries.coredns!,
              netpol: binaries.netpol!,
            },
            kubeconfig,
            kubeConfig,
            caCert: pki.caCert,
          })
        : createFakeNodes(kubeConfig, options.nodes ?? ['kwok-node-0'], failFast),
      // The ServiceAccount controller creating `default` proves kube-controller-manager is serving.
      pollUntil(
        'kube-controller-manager (default ServiceAccount)',
        async () =>
          (await core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }))
            ? true
            : undefined,
        { timeoutMs: 30_000, intervalMs: 100, failFast },
      ),
    ]);
  }

  /** An admin client configuration (system:masters). */
  kubeConfig(): KubeConfig {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(this.kubeconfigPath);
    return kubeConfig;
  }

  kubectl(args: readonly string[], options: { input?: string } = {}): Promise<KubectlResult> {
    return runKubectl(join(this.binDir, 'kubectl'), this.kubeconfigPath, args, options);
  }

  /** Stops and starts kube-apiserver with the same flags, certificates, port and etcd: stored data is kept. */
  async restartApiserver(): Promise<void> {
    await this.#apiserver().restart();
  }

  /** SIGSTOP: connections stay open but nothing answers, as with a hung apiserver. */
  pauseApiserver(): void {
    this.#apiserver().pause();
  }

  resumeApiserver(): void {
    this.#apiserver().resume();
  }

  /** Compacts etcd to its current revision, so requests at older resourceVersions can get 410 Gone. */
  async compactEtcd(): Promise<void> {
    const etcd = this.#parts.etcd;
    if (!etcd) throw new Error('control plane is not running');
    await etcd.compact();
  }

  /**
   * The apiserver's request counter (apiserver_request_total from /metrics, as admin): every client's requests,
   * by verb, resource and code. Compare two readings with requestDelta().
   */
  async requestCounts(): Promise<RequestSeries[]> {
    const https = this.#parts.https;
    if (!https || this.#stopping) throw new Error('control plane is not running');
    const { status, body } = await https.get(`${this.server}/metrics`, 10_000);
    if (status !== 200) throw new Error(`GET /metrics: HTTP ${status}`);
    return parseRequestCounts(body);
  }

  /** Stops every process (workloads first, etcd last) and removes the temp dir. Safe to call twice. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    const parts = this.#parts;
    await parts.binder?.stop();
    // The node first: kubelet would otherwise keep restarting pods and reporting to a stopping apiserver.
    await parts.node?.stop();
    await Promise.all(parts.workloads.map((p) => p.stop(1000)));
    await parts.apiserver?.stop(2000);
    await parts.etcd?.stop(2000);
    if (parts.ownsWorkDir) {
      await rm(parts.workDir, { recursive: true, force: true });
      untrackDirectory(parts.workDir);
    }
  }

  #apiserver(): Apiserver {
    const apiserver = this.#parts.apiserver;
    if (!apiserver || this.#stopping) throw new Error('control plane is not running');
    return apiserver;
  }
}
