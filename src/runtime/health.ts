import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { describeError } from './errors.ts';

/** A named check: undefined when healthy, otherwise the reason it is not. */
export interface Check {
  name: string;
  check: () => string | undefined;
}

export interface HealthServerOptions {
  port: number;
  host?: string;
  registry: Registry;
  liveness?: Check[];
  readiness?: Check[];
}

/** /metrics, /healthz and /readyz on one port, with the per-check `[+]name ok` / `[-]name failed` body of the apiserver. */
export class HealthServer {
  readonly #opts: HealthServerOptions;
  readonly #server: Server;
  readonly #readiness: Check[];
  readonly #liveness: Check[];

  constructor(opts: HealthServerOptions) {
    this.#opts = opts;
    this.#readiness = [...(opts.readiness ?? [])];
    this.#liveness = [...(opts.liveness ?? [])];
    this.#server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/metrics') {
        opts.registry.metrics().then(
          (body) => {
            res.writeHead(200, { 'Content-Type': opts.registry.contentType });
            res.end(body);
          },
          (err: unknown) => {
            res.writeHead(500, { 'Content-Type': 'text/plain' });
            res.end(describeError(err));
          },
        );
        return;
      }
      const checks =
        path === '/healthz' || path === '/livez'
          ? this.#liveness
          : path === '/readyz'
            ? this.#readiness
            : undefined;
      if (!checks) {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('not found\n');
        return;
      }
      const { ok, body } = runChecks(checks);
      res.writeHead(ok ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(body);
    });
  }

  addReadiness(check: Check): void {
    this.#readiness.push(check);
  }

  addLiveness(check: Check): void {
    this.#liveness.push(check);
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#opts.port, this.#opts.host ?? '0.0.0.0', () => resolve());
    });
    return (this.#server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    if (!this.#server.listening) return;
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

export function runChecks(checks: readonly Check[]): { ok: boolean; body: string } {
  let ok = true;
  const lines: string[] = [];
  for (const c of checks) {
    let failure: string | undefined;
    try {
      failure = c.check();
    } catch (err) {
      failure = describeError(err);
    }
    if (failure === undefined) lines.push(`[+]${c.name} ok`);
    else {
      ok = false;
      lines.push(`[-]${c.name} failed: ${failure}`);
    }
  }
  lines.push(ok ? 'ok' : 'check failed');
  return { ok, body: `${lines.join('\n')}\n` };
}
