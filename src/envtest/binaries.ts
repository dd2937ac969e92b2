import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const baseBinaries = ['kube-apiserver', 'etcd', 'kubectl'] as const;
export const workloadBinaries = ['kube-controller-manager', 'kube-scheduler', 'kwok'] as const;
/** The real node's agents (`node: 'real'`). */
export const nodeBinaries = ['kubelet', 'kube-proxy', 'coredns', 'netpol'] as const;
export type BinaryName =
  | (typeof baseBinaries)[number]
  | (typeof workloadBinaries)[number]
  | (typeof nodeBinaries)[number];
export type BinaryPaths = Readonly<Record<BinaryName, string>>;

export interface LocateOptions {
  readonly names: readonly BinaryName[];
  /** Where KUBEBUILDER_ASSETS / TEST_ASSET_* are read from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Build progress goes here; the build takes many minutes cold, so silence would look like a hang. */
  readonly progress?: (line: string) => void;
}

// src/envtest and lib/envtest are both two levels below the repository root.
const buildScript = fileURLToPath(new URL('../../scripts/build-controlplane.sh', import.meta.url));

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** setup-envtest's convention: TEST_ASSET_KUBE_APISERVER, TEST_ASSET_ETCD, TEST_ASSET_KUBECTL, ... */
export function assetVariable(name: BinaryName): string {
  return `TEST_ASSET_${name.toUpperCase().replaceAll('-', '_')}`;
}

function fromEnvironment(name: BinaryName, env: LocateOptions['env']): string | undefined {
  const explicit = env[assetVariable(name)];
  if (explicit) {
    if (!isExecutable(explicit)) throw new Error(`${assetVariable(name)}=${explicit} is not an executable`);
    return explicit;
  }
  const assets = env.KUBEBUILDER_ASSETS;
  if (assets && isExecutable(join(assets, name))) return join(assets, name);
  return undefined;
}

function runBuildScript(args: string[], progress?: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [buildScript, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (progress) for (const line of chunk.split('\n')) if (line) progress(line);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (progress) for (const line of chunk.split('\n')) if (line) progress(line);
    });
    child.once('error', reject);
    // 'close', not 'exit': only then has all of stdout been read.
    child.once('close', (code) => {
      if (code !== 0) {
        reject(new Error(`${buildScript} ${args.join(' ')} exited with ${code}:\n${stderr.slice(-4000)}`));
        return;
      }
      const lastLine = stdout.trim().split('\n').at(-1);
      if (!lastLine) reject(new Error(`${buildScript} printed no bin directory`));
      else resolve(lastLine);
    });
  });
}

/**
 * Finds each binary in TEST_ASSET_<NAME>, then KUBEBUILDER_ASSETS, then the project's build cache; builds
 * the cache (scripts/build-controlplane.sh) only when something is still missing.
 */
export async function locateBinaries(options: LocateOptions): Promise<Partial<BinaryPaths>> {
  const found: Partial<Record<BinaryName, string>> = {};
  const missing: BinaryName[] = [];
  for (const name of options.names) {
    const path = fromEnvironment(name, options.env);
    if (path) found[name] = path;
    else missing.push(name);
  }
  if (missing.length === 0) return found;

  let cacheDir = await runBuildScript(['--print']);
  if (!missing.every((name) => isExecutable(join(cacheDir, name)))) {
    const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
    progress(`envtest: ${missing.join(', ')} not found; building them with ${buildScript}`);
    cacheDir = await runBuildScript([], progress);
  }
  for (const name of missing) {
    const path = join(cacheDir, name);
    if (!isExecutable(path)) throw new Error(`${name} is missing from ${cacheDir} after the build`);
    found[name] = path;
  }
  return found;
}
