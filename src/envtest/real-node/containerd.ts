// containerd for the real node: its own config, root, state and socket in the work dir, the CRI plugin with the
// locally built pause image, runc, and the CNI bridge. The settings below are the ones these machines need (see
// docs/testing.md): no CAP_SYS_RESOURCE in the bounding set (restrict_oom_score_adj), no AppArmor, cgroupfs.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type LogSink, ManagedProcess } from '../process.ts';
import { pollUntil } from '../wait.ts';
import { command } from './host.ts';
import { CNI_BIN_DIR } from './network.ts';

export const PAUSE_IMAGE = 'localhost/pause:envtest';
/** The namespace the CRI plugin keeps Kubernetes' images and containers in. */
const CRI_NAMESPACE = 'k8s.io';

export interface ContainerdPaths {
  readonly dir: string;
  readonly socket: string;
  readonly cniConfDir: string;
}

export function containerdPaths(workDir: string): ContainerdPaths {
  const dir = join(workDir, 'containerd');
  return { dir, socket: join(dir, 'containerd.sock'), cniConfDir: join(workDir, 'cni', 'net.d') };
}

function config(paths: ContainerdPaths): string {
  const s = JSON.stringify;
  return [
    'version = 2',
    `root = ${s(join(paths.dir, 'root'))}`,
    `state = ${s(join(paths.dir, 'state'))}`,
    'disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]',
    '[grpc]',
    `  address = ${s(paths.socket)}`,
    '[ttrpc]',
    `  address = ${s(`${paths.socket}.ttrpc`)}`,
    '[metrics]',
    '  address = ""',
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = ${s(join(paths.dir, 'opt'))}`,
    '[plugins."io.containerd.grpc.v1.cri"]',
    `  sandbox_image = ${s(PAUSE_IMAGE)}`,
    '  restrict_oom_score_adj = true',
    '  disable_apparmor = true',
    '  disable_hugetlb_controller = true',
    '  enable_selinux = false',
    '[plugins."io.containerd.grpc.v1.cri".containerd]',
    '  snapshotter = "overlayfs"',
    '  default_runtime_name = "runc"',
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
    '  runtime_type = "io.containerd.runc.v2"',
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
    '  SystemdCgroup = false',
    '[plugins."io.containerd.grpc.v1.cri".cni]',
    `  bin_dir = ${s(CNI_BIN_DIR)}`,
    `  conf_dir = ${s(paths.cniConfDir)}`,
    '  max_conf_num = 1',
    '',
  ].join('\n');
}

export class Containerd {
  readonly paths: ContainerdPaths;
  readonly process: ManagedProcess;

  private constructor(paths: ContainerdPaths, process: ManagedProcess) {
    this.paths = paths;
    this.process = process;
  }

  /** Starts containerd through `wrapper` (which puts it in the node's cgroup) and waits for its socket. */
  static async start(paths: ContainerdPaths, wrapper: readonly string[], log?: LogSink): Promise<Containerd> {
    await mkdir(paths.dir, { recursive: true });
    const configPath = join(paths.dir, 'config.toml');
    await writeFile(configPath, config(paths));
    const process = new ManagedProcess(
      'containerd',
      wrapper[0]!,
      [...wrapper.slice(1), 'containerd', '--config', configPath],
      log,
    );
    const containerd = new Containerd(paths, process);
    await pollUntil(
      'containerd',
      async () =>
        (await containerd.ctr(['version']).then(
          () => true,
          () => false,
        ))
          ? true
          : undefined,
      {
        timeoutMs: 30_000,
        intervalMs: 100,
        failFast: () => (process.running ? undefined : process.describeExit()),
      },
    );
    return containerd;
  }

  ctr(args: readonly string[]): Promise<{ stdout: string }> {
    return command('ctr', ['--address', this.paths.socket, '--namespace', CRI_NAMESPACE, ...args]);
  }

  /** Imports an OCI archive and names it by every reference given, plus `<repository>@<digest>` for each. */
  async importImage(archive: string, refs: readonly string[]): Promise<string> {
    await this.ctr(['images', 'import', archive]);
    const primary = refs[0];
    if (!primary) throw new Error(`no reference for ${archive}`);
    const digest = await this.digestOf(primary);
    const names = new Set(refs.slice(1));
    for (const ref of refs) names.add(`${repositoryOf(ref)}@${digest}`);
    for (const name of names) await this.ctr(['images', 'tag', '--force', primary, name]);
    return digest;
  }

  async digestOf(ref: string): Promise<string> {
    const { stdout } = await this.ctr(['images', 'ls', `name==${ref}`]);
    const digest = /sha256:[0-9a-f]{64}/.exec(stdout.split('\n').slice(1).join('\n'))?.[0];
    if (!digest) throw new Error(`containerd has no image ${ref}`);
    return digest;
  }

  stop(): Promise<void> {
    return this.process.stop(5000);
  }
}

/** "localhost/postgres:15" → "localhost/postgres" (a port in the registry host stays). */
export function repositoryOf(ref: string): string {
  const at = ref.indexOf('@');
  const withoutDigest = at >= 0 ? ref.slice(0, at) : ref;
  const colon = withoutDigest.lastIndexOf(':');
  return colon > withoutDigest.lastIndexOf('/') ? withoutDigest.slice(0, colon) : withoutDigest;
}
