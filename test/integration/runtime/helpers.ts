import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type ControlPlane, pollUntil } from '../../../src/envtest/index.ts';
import { ApiError, KubeHttp } from '../../../src/runtime/http.ts';
import { CONFIG_MAPS, NAMESPACES } from '../../../src/runtime/kinds.ts';
import type { KubeObject } from '../../../src/runtime/resource.ts';
import type { FixtureConfig } from './fixtures/configmap-operator.ts';

export const configMaps = CONFIG_MAPS;
const namespaces = NAMESPACES;

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export type LogLine = Record<string, unknown> & { msg?: string; time?: string; identity?: string };

const fixture = fileURLToPath(new URL('./fixtures/configmap-operator.ts', import.meta.url));

/** The fixture operator as a child process, with its JSON log lines collected. */
export class OperatorProcess {
  readonly lines: LogLine[] = [];
  readonly identity: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcess;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(config: FixtureConfig) {
    this.identity = config.identity;
    this.#child = spawn(process.execPath, [fixture, JSON.stringify(config)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    createInterface({ input: this.#child.stdout! }).on('line', (line) => {
      try {
        this.lines.push(JSON.parse(line) as LogLine);
      } catch {
        this.lines.push({ msg: 'raw', line });
      }
      if (process.env.RUNTIME_TEST_VERBOSE) console.log(`[${this.identity}] ${line}`);
    });
    createInterface({ input: this.#child.stderr! }).on('line', (line) => {
      this.lines.push({ msg: 'stderr', line });
      console.error(`[${this.identity} stderr] ${line}`);
    });
    this.exited = new Promise((resolve) => {
      this.#child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        resolve(this.#exit);
      });
    });
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  get pid(): number {
    return this.#child.pid!;
  }

  kill(signal: NodeJS.Signals): void {
    if (this.running) this.#child.kill(signal);
  }

  count(pred: (l: LogLine) => boolean): number {
    return this.lines.filter(pred).length;
  }

  find(pred: (l: LogLine) => boolean, from = 0): LogLine | undefined {
    return this.lines.slice(from).find(pred);
  }

  waitForLog(what: string, pred: (l: LogLine) => boolean, timeoutMs: number, from = 0): Promise<LogLine> {
    return pollUntil(what, async () => this.find(pred, from), {
      timeoutMs,
      intervalMs: 20,
      failFast: () => (this.running ? undefined : `${this.identity} exited: ${JSON.stringify(this.#exit)}`),
    });
  }

  async healthPort(): Promise<number> {
    const line = await this.waitForLog('health port', (l) => l.msg === 'health server listening', 30_000);
    return line.port as number;
  }

  async readyz(): Promise<{ status: number; body: string }> {
    const res = await fetch(`http://127.0.0.1:${await this.healthPort()}/readyz`, {
      signal: AbortSignal.timeout(5000),
    });
    return { status: res.status, body: await res.text() };
  }

  /** SIGKILL if still running, and waits for the exit. */
  async stop(): Promise<void> {
    this.kill('SIGKILL');
    await this.exited;
  }
}

export const isReconcile = (key: string) => (l: LogLine) => l.msg === 'reconcile' && l.key === key;
export const isEffect = (l: LogLine) => l.msg === 'effect';

/** Test-side API access through the runtime's own HTTP layer. */
export class TestKube {
  readonly http: KubeHttp;
  readonly namespace: string;

  constructor(plane: ControlPlane, namespace: string) {
    this.http = new KubeHttp(plane.kubeConfig());
    this.namespace = namespace;
  }

  async createNamespace(): Promise<void> {
    await this.http.create(namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: this.namespace },
    });
  }

  async putSource(name: string, data: Record<string, string>): Promise<void> {
    await this.http.apply(
      configMaps,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: this.namespace, labels: { 'runtime-test/role': 'source' } },
        data,
      } as ConfigMap,
      { fieldManager: 'test', force: true },
    );
  }

  async deleteSource(name: string): Promise<void> {
    await this.http.delete(configMaps, { namespace: this.namespace, name });
  }

  async list(): Promise<ConfigMap[]> {
    return (await this.http.list<ConfigMap>(configMaps, { namespace: this.namespace })).items;
  }

  /** Resolves once every source has an output with equal data and no output lacks its source. */
  async waitConverged(timeoutMs: number): Promise<void> {
    let last = '';
    try {
      await pollUntil(
        'outputs converge on sources',
        async () => {
          const all = await this.list();
          const sources = all.filter((c) => c.metadata.labels?.['runtime-test/role'] === 'source');
          const outputs = new Map(
            all
              .filter((c) => c.metadata.labels?.['runtime-test/role'] === 'output')
              .map((c) => [c.metadata.name, c] as const),
          );
          const wrong: string[] = [];
          for (const s of sources) {
            const out = outputs.get(`${s.metadata.name}-out`);
            if (!out || JSON.stringify(sorted(out.data)) !== JSON.stringify(sorted(s.data)))
              wrong.push(s.metadata.name!);
            outputs.delete(`${s.metadata.name}-out`);
          }
          for (const orphan of outputs.keys()) wrong.push(`orphan ${orphan}`);
          last = wrong.slice(0, 5).join(', ');
          return wrong.length === 0 ? true : undefined;
        },
        { timeoutMs, intervalMs: 200 },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}; still wrong: ${last}`);
    }
  }

  /** Sum of apiserver_request_total for mutating verbs on the given resources. */
  async mutatingRequests(resources: readonly string[]): Promise<number> {
    const text = await this.http.request<string>('GET', '/metrics');
    let sum = 0;
    for (const line of String(text).split('\n')) {
      if (!line.startsWith('apiserver_request_total{')) continue;
      const verb = /verb="([^"]*)"/.exec(line)?.[1];
      const resource = /resource="([^"]*)"/.exec(line)?.[1];
      if (!verb || !resource || !resources.includes(resource)) continue;
      if (['GET', 'LIST', 'WATCH', 'WATCHLIST'].includes(verb)) continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}

function sorted(data: Record<string, string> | undefined): [string, string][] {
  return Object.entries(data ?? {}).sort(([a], [b]) => a.localeCompare(b));
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404;
}

/** TCP proxy in front of the apiserver that can cut every connection (and refuse new ones) on demand. */
export class CuttableProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #cut = false;

  constructor(targetPort: number) {
    this.#server = createServer((client) => {
      if (this.#cut) return client.destroy();
      const upstream = connect(targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return (this.#server.address() as AddressInfo).port;
  }

  cut(): void {
    this.#cut = true;
    for (const s of this.#sockets) s.destroy();
  }

  restore(): void {
    this.#cut = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A copy of the plane's kubeconfig pointing at another port on loopback (the proxy). */
export async function kubeconfigVia(plane: ControlPlane, port: number): Promise<string> {
  const text = await readFile(plane.kubeconfigPath, 'utf8');
  const path = join(await mkdtemp(join(tmpdir(), 'runtime-kubeconfig-')), 'kubeconfig');
  await writeFile(path, text.replaceAll(plane.server, `https://127.0.0.1:${port}`));
  return path;
}
