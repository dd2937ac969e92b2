// The operator as `npm start` runs it (`node src/main.ts`), for benchmarks: its ports, its /metrics, its resident
// memory and CPU time read from /proc, and a SIGTERM stop.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts, pollUntil } from '../../src/envtest/index.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

function httpGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Sum of a Prometheus metric's samples whose labels include all of `labels`. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export class BenchOperator {
  readonly #child: ChildProcess;
  readonly #exited: Promise<unknown>;
  readonly #metricsUrl: string;
  readonly #readyUrl: string;
  readonly log: string[] = [];

  private constructor(child: ChildProcess, healthPort: number, metricsPort: number) {
    this.#child = child;
    this.#exited = once(child, 'exit');
    this.#metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    this.#readyUrl = `http://127.0.0.1:${healthPort}/readyz`;
    const keep = (chunk: Buffer) => {
      this.log.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (this.log.length > 2000) this.log.splice(0, this.log.length - 2000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
  }

  /**
   * Starts it (admin kubeconfig, no leader election) and waits for /readyz: every cache synced. `entry` is the
   * script node runs, relative to the checkout: `src/main.ts` as `npm start` runs it (Node strips the types, which
   * costs RSS of its own), `lib/main.js` (after `npm run build`), or `lib/operator.js`, the bundle the image runs.
   * `nodeArgs` go to node before the script (V8 flags).
   */
  static async start(
    kubeconfigPath: string,
    namespaces: readonly string[],
    entry: string = process.env.BENCH_OPERATOR_ENTRY ?? 'src/main.ts',
    nodeArgs: readonly string[] = [],
  ): Promise<BenchOperator> {
    const [healthPort, metricsPort] = (await freePorts(2)) as [number, number];
    const child = spawn(process.execPath, [...nodeArgs, join(root, entry)], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        KUBECONFIG: kubeconfigPath,
        WATCH_NAMESPACES: namespaces.join(','),
        LEADER_ELECTION: 'false',
        LOG_LEVEL: 'warn',
        HEALTH_PORT: String(healthPort),
        METRICS_PORT: String(metricsPort),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const operator = new BenchOperator(child, healthPort, metricsPort);
    await pollUntil(
      'operator /readyz',
      async () =>
        (await httpGet(operator.#readyUrl).catch(() => undefined))?.status === 200 ? true : undefined,
      {
        timeoutMs: 120_000,
        intervalMs: 100,
        failFast: () =>
          child.exitCode !== null
            ? `exited ${child.exitCode}: ${operator.log.slice(-5).join('\n')}`
            : undefined,
      },
    );
    return operator;
  }

  async metrics(): Promise<string> {
    const { status, body } = await httpGet(this.#metricsUrl);
    if (status !== 200) throw new Error(`operator /metrics: HTTP ${status}`);
    return body;
  }

  /** Resident set size (VmRSS), bytes. */
  async rssBytes(): Promise<number> {
    const status = await readFile(`/proc/${this.#child.pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    if (!kb) throw new Error('no VmRSS');
    return Number(kb) * 1024;
  }

  /** User + system CPU time so far, seconds. */
  async cpuSeconds(): Promise<number> {
    const stat = await readFile(`/proc/${this.#child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), counted from after the command name; clock ticks are 100/s on Linux.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode === null) this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 40_000);
    await this.#exited;
    clearTimeout(timer);
  }
}
