// The images the real node runs, built on this machine by scripts/build-images.sh (cached by content under
// ~/.cache/sampledb-operator/images/) and imported into the node's containerd under their references, so pods use
// them with imagePullPolicy IfNotPresent and nothing is ever pulled.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Containerd } from './containerd.ts';

export const NODE_IMAGES = [
  'pause',
  'postgres-15',
  'postgres-17',
  // postgres-15 under another digest (a label more): the minor-upgrade e2e test rolls onto it.
  'postgres-15-rebuilt',
  'postgres-exporter',
  'operator',
] as const;
export type NodeImage = (typeof NODE_IMAGES)[number];

/** The repository of the PostgreSQL images; point the operator's PostgreSQL image repository setting at it. */
export const LOCAL_POSTGRES_REPOSITORY = 'localhost/postgres';

export interface ImportedImage {
  readonly name: NodeImage;
  /** Every reference it answers to, e.g. localhost/postgres:15.14, localhost/postgres:15 and repo@sha256:... */
  readonly refs: readonly string[];
  /** The manifest digest ("sha256:..."), the same one a registry would report. */
  readonly digest: string;
}

// src/envtest/real-node and lib/envtest/real-node are both three levels below the repository root.
const buildScript = fileURLToPath(new URL('../../../scripts/build-images.sh', import.meta.url));

interface BuiltImage {
  readonly name: NodeImage;
  readonly archive: string;
  readonly refs: string[];
}

/** Builds what is missing (progress on `progress`) and returns each image's archive and references. */
export function buildImages(
  names: readonly NodeImage[],
  progress: (line: string) => void,
): Promise<BuiltImage[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [buildScript, ...names], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-8000);
      for (const line of chunk.split('\n')) if (line) progress(line);
    });
    child.once('error', reject);
    // 'close', not 'exit': only then has all of stdout been read.
    child.once('close', (code) => {
      if (code !== 0) {
        reject(new Error(`${buildScript} ${names.join(' ')} exited with ${code}:\n${stderr}`));
        return;
      }
      const images = stdout
        .trim()
        .split('\n')
        .map((line) => line.split(' '))
        .map(([name, archive, ...refs]) => ({ name: name as NodeImage, archive: archive ?? '-', refs }));
      const missing = images.filter((image) => image.archive === '-' || image.refs.length === 0);
      if (missing.length > 0) reject(new Error(`not built: ${missing.map((i) => i.name).join(', ')}`));
      else resolve(images);
    });
  });
}

export async function importImages(
  containerd: Containerd,
  images: readonly BuiltImage[],
): Promise<ImportedImage[]> {
  return Promise.all(
    images.map(async ({ name, archive, refs }) => {
      const digest = await containerd.importImage(archive, refs);
      const repositories = [...new Set(refs.map((ref) => ref.replace(/:[^:/]+$/, '')))];
      return { name, digest, refs: [...refs, ...repositories.map((repo) => `${repo}@${digest}`)] };
    }),
  );
}
