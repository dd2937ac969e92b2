// Real volumes for the real node: each PersistentVolume is an XFS file system in a sparse file of the claim's size,
// loop-mounted in the work dir and handed to pods as a `local` volume (kubelet bind-mounts it and applies fsGroup).
// Growing a claim grows the file, the loop device and then the mounted file system online (xfs_growfs), so the
// database sees the new size in `df` while it runs, as on a cloud disk. Chosen over a quota'd directory (the
// machine's root file system has no project quotas) because a file system per volume makes "full" and "grown" real
// for PostgreSQL; XFS over ext4 because growing a mounted ext4 needs CAP_SYS_RESOURCE, which these machines' capability
// bounding set lacks, while xfs_growfs needs only CAP_SYS_ADMIN. XFS cannot be smaller than 300 MiB: a smaller claim
// gets a 300 MiB file system (its PersistentVolume still says the claimed size).
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { VolumeBackend } from '../volume-binder.ts';
import { command } from './host.ts';

export const LOCAL_PROVISIONER = 'envtest.local/local-volume';
/** mkfs.xfs refuses smaller file systems. */
const MIN_BYTES = 300 * 2 ** 20;

async function isMountPoint(path: string): Promise<boolean> {
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  return mounts.split('\n').some((line) => line.split(' ')[4] === path);
}

export class LocalVolumes implements VolumeBackend {
  readonly provisioner = LOCAL_PROVISIONER;
  // As for any local volume: the scheduler picks the node first (there is one, but the order is the real one).
  readonly bindingMode = 'WaitForFirstConsumer';
  readonly #dir: string;
  readonly #nodeName: string;

  constructor(dir: string, nodeName: string) {
    this.#dir = dir;
    this.#nodeName = nodeName;
  }

  #file(name: string): string {
    return join(this.#dir, `${name}.img`);
  }

  #mountPoint(name: string): string {
    return join(this.#dir, name);
  }

  async #device(name: string): Promise<string | undefined> {
    const { stdout } = await command('losetup', ['-n', '-O', 'NAME', '-j', this.#file(name)]);
    return stdout.trim().split('\n')[0] || undefined;
  }

  /** Idempotent: a retry after a failed PV creation finds the file system made and mounted. */
  async create(name: string, bytes: number) {
    const file = this.#file(name);
    const mountPoint = this.#mountPoint(name);
    await mkdir(mountPoint, { recursive: true });
    if (!(await isMountPoint(mountPoint))) {
      if (!existsSync(file)) {
        try {
          await command('truncate', ['-s', String(Math.max(bytes, MIN_BYTES)), file]);
          await command('mkfs.xfs', ['-q', file]);
        } catch (error) {
          // A file without a file system must not be taken for a made volume on the next attempt.
          await rm(file, { force: true });
          throw error;
        }
      }
      const device =
        (await this.#device(name)) ?? (await command('losetup', ['--find', '--show', file])).stdout.trim();
      await command('mount', ['-t', 'xfs', '-o', 'noatime', device, mountPoint]);
    }
    return {
      local: { path: mountPoint },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            {
              matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [this.#nodeName] }],
            },
          ],
        },
      },
    };
  }

  async resize(name: string, bytes: number): Promise<void> {
    const file = this.#file(name);
    if ((await stat(file)).size >= bytes) return;
    const device = await this.#device(name);
    if (!device) throw new Error(`volume ${name} has no loop device`);
    await command('truncate', ['-s', String(bytes), file]);
    await command('losetup', ['--set-capacity', device]);
    await command('xfs_growfs', [this.#mountPoint(name)]);
  }

  async remove(name: string): Promise<void> {
    const mountPoint = this.#mountPoint(name);
    if (await isMountPoint(mountPoint)) await command('umount', [mountPoint]);
    const device = existsSync(this.#file(name)) ? await this.#device(name) : undefined;
    if (device) await command('losetup', ['-d', device]);
    await rm(this.#file(name), { force: true });
    await rm(mountPoint, { recursive: true, force: true });
  }
}
