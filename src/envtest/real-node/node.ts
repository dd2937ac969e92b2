// A real Kubernetes node on this machine: containerd + runc + the CNI bridge, kubelet, kube-proxy, CoreDNS,
// NetworkPolicy enforcement (netpol.ts) and file-system-backed local volumes, next to the control plane's
// processes. Two phases, because the apiserver binds to the bridge's address: prepare() takes the machine-wide lock, records the machine's state and makes the
// bridge, cgroups and containerd (importing the images meanwhile); start() runs the node's agents once the
// control plane is up. stop() and every failure path run the same teardown script (host-journal.ts).
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { trackTeardown, untrackTeardown } from '../cleanup.ts';
import { freePorts } from '../ports.ts';
import type { LogSink, ManagedProcess } from '../process.ts';
import { pollUntil } from '../wait.ts';
import {
  cgroupLayout,
  createTree,
  isCgroupV1,
  joinRuntimeCgroup,
  missingParents,
  treeRoots,
} from './cgroups.ts';
import { Containerd, containerdPaths } from './containerd.ts';
import { publishDnsService, startCoredns } from './coredns.ts';
import { command, readSysctl } from './host.ts';
import { HostJournal, networkNamespaces } from './host-journal.ts';
import { buildImages, type ImportedImage, importImages, NODE_IMAGES, type NodeImage } from './images.ts';
import { startKubeProxy } from './kube-proxy.ts';
import { NODE_NAME, startKubelet } from './kubelet.ts';
import { LocalVolumes } from './local-volumes.ts';
import { acquireNodeLock, LOCK_FILE, type LockHolder } from './lock.ts';
import { queuePodConnections, startNetpolAgent } from './netpol.ts';
import {
  BRIDGE,
  bridgeExists,
  createBridge,
  isolatePodNetwork,
  NODE_ADDRESS,
  writeCniConfig,
} from './network.ts';

export interface RealNodeOptions {
  /** How long to wait for another real node on this machine to stop (default 0: refuse at once). */
  readonly lockWaitMs?: number;
  /** Images to import (default: all of them). `pause` is always imported. */
  readonly images?: readonly NodeImage[];
  /** Output of the node's processes, prefixed `[kubelet]` etc. */
  readonly log?: LogSink;
  /** Image build and lock-wait progress (default: stderr). */
  readonly progress?: (line: string) => void;
  /**
   * Enforce NetworkPolicy with the netpol agent (default false). Opt-in: with it, the first packet of every
   * connection between pods passes the agent's queue, and a full e2e tier with it on lost two unrelated tests'
   * connections once (not yet explained), so only runs that ask for it get it.
   */
  readonly networkPolicy?: boolean;
}

export interface RealNodeBinaries {
  readonly kubelet: string;
  readonly 'kube-proxy': string;
  readonly coredns: string;
  readonly netpol: string;
}

/** Sysctls that kubelet, kube-proxy and the CNI bridge plugin may change; restored on teardown. */
export const WATCHED_SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
  'net.ipv4.ip_forward',
  'net.ipv4.conf.all.forwarding',
  'net.ipv4.conf.all.route_localnet',
  'net.ipv6.conf.all.forwarding',
  'net.bridge.bridge-nf-call-iptables',
  'net.bridge.bridge-nf-call-ip6tables',
  'net.netfilter.nf_conntrack_max',
  'net.netfilter.nf_conntrack_tcp_timeout_established',
  'net.netfilter.nf_conntrack_tcp_timeout_close_wait',
];

/** Fixed paths kubelet, containerd and the CNI plugins write whatever their configuration says. */
export const FIXED_PATHS = [
  '/var/lib/kubelet',
  '/var/log/containers',
  '/var/log/pods',
  '/var/lib/cni',
  '/run/containerd',
  '/run/netns',
];

const REQUIRED_COMMANDS = [
  'containerd',
  'ctr',
  'runc',
  'ip',
  'iptables',
  'iptables-save',
  'iptables-restore',
  'losetup',
  'mkfs.xfs',
  'xfs_growfs',
  'mount',
  'umount',
  'truncate',
];

async function missingCommands(): Promise<string[]> {
  const missing: string[] = [];
  for (const name of REQUIRED_COMMANDS) {
    try {
      await command('sh', ['-c', `command -v ${name}`]);
    } catch {
      missing.push(name);
    }
  }
  return missing;
}

async function snapshotSysctls(): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  for (const key of WATCHED_SYSCTLS) {
    const value = await readSysctl(key);
    if (value !== undefined) values[key] = value;
  }
  return values;
}

function runScript(script: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('sh', [script], { stdio: 'ignore' });
    child.once('error', () => resolve());
    child.once('exit', () => resolve());
  });
}

export class RealNode {
  readonly name = NODE_NAME;
  readonly address = NODE_ADDRESS;
  readonly workDir: string;
  readonly volumes: LocalVolumes;
  readonly #journal: HostJournal;
  readonly #wrapper: readonly string[];
  readonly #options: RealNodeOptions;
  readonly #agents: ManagedProcess[] = [];
  #containerd: Promise<Containerd> | undefined;
  #images: Promise<ImportedImage[]> | undefined;
  #imported: ImportedImage[] = [];
  #stopping: Promise<void> | undefined;

  private constructor(journal: HostJournal, wrapper: readonly string[], options: RealNodeOptions) {
    this.#journal = journal;
    this.#wrapper = wrapper;
    this.#options = options;
    this.workDir = journal.changes.workDir;
    this.volumes = new LocalVolumes(join(this.workDir, 'volumes'), NODE_NAME);
  }

  /** Takes the lock, records the machine's state, makes the bridge and cgroups, starts containerd. */
  static async prepare(options: RealNodeOptions = {}): Promise<RealNode> {
    if (process.getuid?.() !== 0) {
      throw new Error('the real node needs root: kubelet, containerd, the bridge and loop-mounted volumes');
    }
    if (!(await isCgroupV1())) {
      throw new Error('the real node supports cgroup v1 hosts only (as on the project machines)');
    }
    const missing = await missingCommands();
    if (missing.length > 0) {
      throw new Error(`the real node needs ${missing.join(', ')}: run scripts/install-system-deps.sh`);
    }
    const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
    const holder: LockHolder = await acquireNodeLock({
      ...(options.lockWaitMs !== undefined ? { waitMs: options.lockWaitMs } : {}),
      onWait: (h) =>
        progress(`real node: waiting for pid ${h.pid} ("${h.command}" in ${h.cwd}) to stop its node`),
    });
    const workDir = await mkdtemp('/tmp/envtest-node-');
    const layout = await cgroupLayout();
    const journal = new HostJournal(
      {
        owner: { pid: holder.pid, startTime: holder.startTime },
        workDir,
        lockFile: LOCK_FILE,
        sysctls: await snapshotSysctls(),
        cgroupTrees: treeRoots(layout),
        cgroupParents: missingParents(layout),
        createdPaths: [],
        netnsBefore: await networkNamespaces(),
      },
      holder.teardown,
    );
    await journal.record();
    trackTeardown(holder.teardown);
    const wrapper = ['sh', '-c', joinRuntimeCgroup(layout), 'sh'];
    const node = new RealNode(journal, wrapper, options);
    try {
      for (const path of FIXED_PATHS) await journal.willCreate(path);
      await createTree(layout);
      if (await bridgeExists()) {
        throw new Error(
          `network interface ${BRIDGE} exists but no real node holds the lock: delete it (ip link del ${BRIDGE})`,
        );
      }
      await journal.record((c) => {
        c.bridge = BRIDGE;
      });
      await createBridge();
      const v4 = `${holder.teardown}.iptables-v4`;
      const v6 = `${holder.teardown}.iptables-v6`;
      await writeFile(v4, (await command('iptables-save', [])).stdout);
      const saved6 = await command('ip6tables-save', []).then(
        (r) => r.stdout,
        () => undefined,
      );
      if (saved6 !== undefined) await writeFile(v6, saved6);
      await journal.record((c) => {
        c.iptables = { v4, ...(saved6 !== undefined ? { v6 } : {}) };
      });
      await isolatePodNetwork();
      const paths = containerdPaths(workDir);
      await writeCniConfig(paths.cniConfDir, join(workDir, 'cni', 'ipam'));
      node.#containerd = Containerd.start(paths, wrapper, options.log);
      const wanted: NodeImage[] = ['pause', ...(options.images ?? NODE_IMAGES).filter((i) => i !== 'pause')];
      // Building (when not cached) overlaps the control plane's start; importing needs containerd.
      const built = buildImages(wanted, progress);
      node.#images = Promise.all([node.#containerd, built]).then(([containerd, images]) =>
        importImages(containerd, images),
      );
      // Rejections are observed by start(); until then they must not count as unhandled.
      node.#containerd.catch(() => {});
      node.#images.catch(() => {});
      return node;
    } catch (error) {
      await node.stop();
      throw error;
    }
  }

  /** The images imported into the node, once start() has returned. */
  get images(): readonly ImportedImage[] {
    return this.#imported;
  }

  image(name: NodeImage): ImportedImage {
    const image = this.#imported.find((i) => i.name === name);
    if (!image) throw new Error(`image ${name} was not imported into the real node`);
    return image;
  }

  /** Starts kubelet, kube-proxy, CoreDNS and the NetworkPolicy agent against the running control plane; returns when the node is Ready. */
  async start(controlPlane: {
    readonly binaries: RealNodeBinaries;
    readonly kubeconfig: string;
    readonly kubeConfig: KubeConfig;
    readonly caCert: string;
  }): Promise<void> {
    const containerd = await this.#containerd!;
    const [kubeletPort, kubeletHealthz, proxyHealthz, proxyMetrics, dnsHealth, dnsReady] = (await freePorts(
      6,
    )) as [number, number, number, number, number, number];
    const common = {
      wrapper: this.#wrapper,
      workDir: this.workDir,
      kubeconfig: controlPlane.kubeconfig,
      log: this.#options.log,
    };
    const layout = await cgroupLayout();
    this.#agents.push(
      await startKubelet({
        ...common,
        binary: controlPlane.binaries.kubelet,
        caCert: controlPlane.caCert,
        containerdSocket: containerd.paths.socket,
        cgroupRoot: layout.podsPath,
        port: kubeletPort,
        healthzPort: kubeletHealthz,
      }),
      await startKubeProxy({
        ...common,
        binary: controlPlane.binaries['kube-proxy'],
        nodeName: NODE_NAME,
        healthzPort: proxyHealthz,
        metricsPort: proxyMetrics,
      }),
      await startCoredns({
        ...common,
        binary: controlPlane.binaries.coredns,
        healthPort: dnsHealth,
        readyPort: dnsReady,
      }),
    );
    if (this.#options.networkPolicy) {
      await this.#journal.record((c) => {
        c.netpolAgent = controlPlane.binaries.netpol;
      });
      this.#agents.push(
        startNetpolAgent({ ...common, binary: controlPlane.binaries.netpol, nodeName: NODE_NAME }),
      );
      await queuePodConnections();
    }
    const failFast = (): string | undefined =>
      [containerd.process, ...this.#agents].find((p) => !p.running)?.describeExit();
    await publishDnsService(controlPlane.kubeConfig);
    this.#imported = await this.#images!;
    const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
    await pollUntil(
      `node ${NODE_NAME} Ready`,
      async () => {
        const node: V1Node = await core.readNode({ name: NODE_NAME });
        return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, failFast },
    );
    await pollUntil(
      'CoreDNS ready',
      async () => ((await fetch(`http://127.0.0.1:${dnsReady}/ready`)).ok ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 200, failFast },
    );
  }

  /** Stops the agents and containerd, then restores the machine (teardown script). Safe to call twice. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    await Promise.all(this.#agents.map((agent) => agent.stop(5000)));
    const containerd = await this.#containerd?.catch(() => undefined);
    await containerd?.stop();
    await runScript(this.#journal.scriptPath);
    untrackTeardown(this.#journal.scriptPath);
  }
}
