// The operator as a real process (`node src/main.ts`, what `npm start` runs), for end-to-end tests: start it with a
// kubeconfig, stop it with SIGTERM (expecting exit 0) or SIGKILL it, and keep its JSON log lines for assertions and
// for the failure message of a test.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const nodeBinary = process.execPath;
/** Where the synthesized RBAC grants the Lease (the constructs' default operator namespace). */
const OPERATOR_NAMESPACE = 'sampledb-system';

export interface OperatorOptions {
  kubeconfigPath: string;
  /** Extra environment (WATCH_NAMESPACES, LEADER_ELECTION, ...). */
  env?: Record<string, string>;
  /** Another build of the operator to run (a directory with src/ and node_modules/); default: this checkout. */
  root?: string;
}

const live = new Set<OperatorProcess>();
// Even if the test runner dies before its after() hooks run.
process.once('exit', () => {
  for (const operator of live) operator.kill();
});

export class OperatorProcess {
  readonly lines: string[] = [];
  readonly #child: ChildProcess;
  readonly #exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.#exited = once(child, 'exit').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) this.lines.push(line);
      if (this.lines.length > 20_000) this.lines.splice(0, this.lines.length - 20_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
  }

  static start(options: OperatorOptions): OperatorProcess {
    const from = options.root ?? root;
    const child = spawn(nodeBinary, [join(from, 'src/main.ts')], {
      cwd: from,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        KUBECONFIG: options.kubeconfigPath,
        // Leader election as deployed, so the tests run it under the synthesized Lease rules (a Role in the
        // operator's namespace); a unique identity, as each pod has its own name.
        LEADER_ELECTION: 'true',
        POD_NAMESPACE: OPERATOR_NAMESPACE,
        POD_NAME: `test-operator-${randomBytes(3).toString('hex')}`,
        LOG_LEVEL: 'debug',
        HEALTH_PORT: '0',
        METRICS_PORT: '0',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const operator = new OperatorProcess(child);
    live.add(operator);
    void operator.#exited.then(() => live.delete(operator));
    return operator;
  }

  /** For the test file's after(): a test that failed before stopping its operator must not leave it running. */
  static async killAll(): Promise<void> {
    await Promise.all([...live].map((o) => o.kill()));
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** SIGTERM, then waits (bounded) for the exit. */
  async stop(timeoutMs = 40_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.running) this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.#exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILL: no cleanup at all, as when a node dies. */
  async kill(): Promise<void> {
    if (this.running) this.#child.kill('SIGKILL');
    await this.#exited;
  }

  /** Parsed log lines (the operator logs JSON). */
  logs(): Array<Record<string, unknown>> {
    return this.lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [{ msg: line }];
      }
    });
  }

  tail(n = 60): string {
    return this.lines.slice(-n).join('\n');
  }
}
