// The packaging tools (helm, olm-validate) for the packaging tests: built from their Go modules by
// scripts/build-packaging-tools.sh, which scripts/test.sh runs before the integration tests; a file run on its own
// builds them here if they are missing (minutes when cold; progress goes to stderr).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const script = join(repoRoot, 'scripts/build-packaging-tools.sh');

/** The bin directory with helm and olm-validate, building them first if needed. */
export function packagingTools(): { helm: string; olmValidate: string } {
  const printed = spawnSync('bash', [script, '--print'], { encoding: 'utf8' });
  let dir = printed.stdout.trim();
  if (!existsSync(join(dir, 'helm')) || !existsSync(join(dir, 'olm-validate'))) {
    const built = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (built.status !== 0) throw new Error(`scripts/build-packaging-tools.sh failed:\n${built.stdout}`);
    dir = built.stdout.trim().split('\n').at(-1) ?? dir;
  }
  return { helm: join(dir, 'helm'), olmValidate: join(dir, 'olm-validate') };
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a tool to completion (bounded), without a shell. */
export function run(
  command: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? repoRoot,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
