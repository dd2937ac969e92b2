// The node's cgroup tree (cgroup v1, as on these machines). kubelet's cgroupfs driver needs its cgroupRoot to exist
// in every hierarchy; the tree is nested under this process's own memory cgroup so that pods count against the
// machine's accounting, and the node's daemons run in it too, so one walk over the tree finds every process the
// node started (containers, shims, containerd, kubelet), which is how the teardown stops them.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';
/** The v1 hierarchies kubelet and runc use. */
const HIERARCHIES = ['blkio', 'cpu', 'cpuacct', 'cpuset', 'devices', 'freezer', 'memory', 'pids', 'systemd'];
const TREE_NAME = 'sampledb-node';

export interface CgroupLayout {
  /** The tree's path inside every hierarchy, e.g. /process_api/1234/sampledb-node. */
  readonly path: string;
  /** kubelet's cgroupRoot (pods go below it, in kubepods). */
  readonly podsPath: string;
  /** Where the node's daemons run. */
  readonly runtimePath: string;
  readonly hierarchies: readonly string[];
}

export async function isCgroupV1(): Promise<boolean> {
  return existsSync(join(CGROUP_ROOT, 'memory', 'cgroup.procs'));
}

async function ownMemoryCgroup(): Promise<string> {
  const lines = (await readFile('/proc/self/cgroup', 'utf8')).split('\n');
  const memory = lines.find((line) => line.split(':')[1]?.split(',').includes('memory'));
  return memory?.split(':')[2] ?? '/';
}

export async function cgroupLayout(): Promise<CgroupLayout> {
  const base = await ownMemoryCgroup();
  const path = join(base, TREE_NAME);
  const hierarchies = HIERARCHIES.filter((h) => existsSync(join(CGROUP_ROOT, h)));
  return { path, podsPath: join(path, 'pods'), runtimePath: join(path, 'runtime'), hierarchies };
}

/**
 * Where the tree lives, for the teardown: every v1 hierarchy, and the v2 one of a hybrid host, where runc mirrors
 * the containers' cgroups.
 */
export const treeRoots = (layout: CgroupLayout): string[] =>
  [...layout.hierarchies, ...(existsSync(join(CGROUP_ROOT, 'unified')) ? ['unified'] : [])].map((h) =>
    join(CGROUP_ROOT, h, layout.path),
  );

/** The parent directories that `create` would make, outermost first (to be recorded before it runs). */
export function missingParents(layout: CgroupLayout): string[] {
  const missing: string[] = [];
  for (const h of layout.hierarchies) {
    const parts = layout.path.split('/').filter(Boolean).slice(0, -1);
    let dir = join(CGROUP_ROOT, h);
    for (const part of parts) {
      dir = join(dir, part);
      if (!existsSync(dir)) missing.push(dir);
    }
  }
  return missing;
}

/** Creates the tree (pods and runtime) in every hierarchy; cpuset directories get their parent's cpus and mems. */
export async function createTree(layout: CgroupLayout): Promise<void> {
  for (const h of layout.hierarchies) {
    for (const leaf of [layout.podsPath, layout.runtimePath]) {
      const parts = leaf.split('/').filter(Boolean);
      let dir = join(CGROUP_ROOT, h);
      for (const part of parts) {
        const parent = dir;
        dir = join(dir, part);
        if (existsSync(dir)) continue;
        await mkdir(dir);
        if (h === 'cpuset') {
          for (const file of ['cpuset.cpus', 'cpuset.mems'])
            await writeFile(join(dir, file), await readFile(join(parent, file), 'utf8'));
        }
      }
    }
  }
}

/** A shell prefix that moves the shell into the runtime cgroup of every hierarchy before it execs the daemon. */
export function joinRuntimeCgroup(layout: CgroupLayout): string {
  const files = layout.hierarchies.map((h) => join(CGROUP_ROOT, h, layout.runtimePath, 'cgroup.procs'));
  return `for f in ${files.join(' ')}; do echo $$ > "$f" || exit 1; done; exec "$@"`;
}
