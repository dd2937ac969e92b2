// The locally built PostgreSQL images (scripts/build-images.sh: 15 from Debian bookworm, 17 from trixie) as root file
// systems a data-path test can run scripts in, the way their containers run them: chrooted, as the image's postgres
// user (uid 999), with host directories bind-mounted at the same paths. A newer distribution's binaries need its own
// glibc, so the 17 binaries cannot run on this bookworm machine outside their root file system.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const buildScript = fileURLToPath(new URL('../../scripts/build-images.sh', import.meta.url));
/** The postgres user and group of the images (the official image's contract). */
export const IMAGE_POSTGRES_ID = 999;

const isRoot = () => process.getuid?.() === 0;

/**
 * The unpacked root file system of the built `postgres-<major>` image (unpacked once, next to its archive in the
 * image cache, so a rebuilt image gets its own); undefined when the image is not built (this never builds it) or
 * when not root (unpacking keeps the files' owners, chroot and mount need root).
 */
export function postgresImageRootfs(major: number): string | undefined {
  if (!isRoot()) return undefined;
  const printed = spawnSync('bash', [buildScript, '--print', `postgres-${major}`], { encoding: 'utf8' });
  const archive = printed.stdout.trim().split(' ')[1];
  if (printed.status !== 0 || !archive || archive === '-' || !existsSync(archive)) return undefined;
  const rootfs = join(dirname(archive), 'rootfs');
  if (existsSync(join(rootfs, 'usr/lib/postgresql', String(major), 'bin/postgres'))) return rootfs;
  const work = mkdtempSync(join(dirname(archive), '.unpack-'));
  try {
    const tar = (args: string[]) => {
      const run = spawnSync('tar', args, { encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`tar ${args.join(' ')}: ${run.stderr}`);
    };
    tar(['-xf', archive, '-C', work]);
    const blob = (digest: string) => join(work, 'blobs', ...digest.split(':'));
    const index = JSON.parse(readFileSync(join(work, 'index.json'), 'utf8')) as {
      manifests: { digest: string }[];
    };
    const manifest = JSON.parse(readFileSync(blob(index.manifests[0]?.digest ?? ''), 'utf8')) as {
      layers: { digest: string }[];
    };
    const root = join(work, 'rootfs');
    mkdirSync(root);
    for (const layer of manifest.layers) tar(['--numeric-owner', '-xzf', blob(layer.digest), '-C', root]);
    renameSync(root, rootfs);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return rootfs;
}

/**
 * The command that runs `script` with sh inside `rootfs` as uid/gid 999 with exactly `env`, `/dev` and `/proc` and
 * each of `binds` mounted at the same path inside. The mounts live in a mount namespace of the command's own and
 * end with it.
 */
export function inImage(
  rootfs: string,
  binds: readonly string[],
  env: Record<string, string>,
  script: string,
): [string, string[]] {
  for (const dir of ['dev', 'proc', ...binds]) mkdirSync(join(rootfs, dir), { recursive: true });
  const mounts = ['/dev', '/proc', ...binds]
    .map((dir) => `mount --rbind '${dir}' '${join(rootfs, dir)}'`)
    .join(' && ');
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return [
    'unshare',
    [
      '-m',
      '--propagation',
      'private',
      'sh',
      '-c',
      `${mounts} && exec chroot --userspec=${IMAGE_POSTGRES_ID}:${IMAGE_POSTGRES_ID} "$0" env -i "$@"`,
      rootfs,
      ...envArgs,
      'sh',
      '-c',
      script,
    ],
  ];
}
