import { spawn } from 'node:child_process';

export interface KubectlResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

/** Runs kubectl against one kubeconfig; never throws on a non-zero exit (callers assert on `code`). */
export function runKubectl(
  binary: string,
  kubeconfigPath: string,
  args: readonly string[],
  options: { input?: string } = {},
): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [`--kubeconfig=${kubeconfigPath}`, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ stdout, stderr, code: code ?? -1 }));
    // kubectl may exit before it reads its input (a refused connection, a bad flag): its exit code and stderr say
    // why, while the EPIPE of the write would only hide that.
    child.stdin.once('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}
