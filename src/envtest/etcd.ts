import { mergeFlags } from './flags.ts';
import { type LogSink, ManagedProcess } from './process.ts';
import { pollUntil } from './wait.ts';

export interface EtcdOptions {
  readonly binary: string;
  readonly dataDir: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly extraArgs?: readonly string[];
  readonly log?: LogSink;
}

/** A single-member etcd on loopback, plain HTTP, without fsync: test data is disposable. */
export class Etcd {
  readonly url: string;
  readonly #process: ManagedProcess;

  private constructor(url: string, process: ManagedProcess) {
    this.url = url;
    this.#process = process;
  }

  static async start(options: EtcdOptions): Promise<Etcd> {
    const url = `http://127.0.0.1:${options.clientPort}`;
    const peerUrl = `http://127.0.0.1:${options.peerPort}`;
    const args = mergeFlags(
      [
        `--data-dir=${options.dataDir}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      options.extraArgs ?? [],
    );
    const process = new ManagedProcess('etcd', options.binary, args, options.log);
    const etcd = new Etcd(url, process);
    try {
      await pollUntil(
        'etcd health',
        async () => {
          const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
          const body = (await response.json()) as { health?: string };
          return body.health === 'true' ? true : undefined;
        },
        { timeoutMs: 20_000, failFast: () => (process.running ? undefined : process.describeExit()) },
      );
    } catch (error) {
      await process.kill();
      throw error;
    }
    return etcd;
  }

  get process(): ManagedProcess {
    return this.#process;
  }

  /** Compacts history up to the current revision, so watches and lists at older revisions get 410 Gone. */
  async compact(): Promise<number> {
    const range = await this.#post('/v3/kv/range', { key: Buffer.from('\0').toString('base64') });
    const revision = Number((range as { header?: { revision?: string } }).header?.revision);
    if (!Number.isFinite(revision)) throw new Error('etcd: no revision in range response');
    await this.#post('/v3/kv/compaction', { revision: String(revision), physical: true });
    return revision;
  }

  async #post(path: string, body: unknown): Promise<unknown> {
    const response = await fetch(`${this.url}${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  }

  stop(graceMs?: number): Promise<void> {
    return this.#process.stop(graceMs);
  }
}
