// The HTTP(S) transport to the apiserver: node:http(s) with one keep-alive agent per client, so connections are
// pooled and the TLS settings of the cluster (its CA, a client certificate) apply to every request.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { TlsSettings } from './cluster-access.ts';

export interface TransportRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface TransportResponse {
  readonly status: number;
  /** The whole body as text (consumes it). */
  text(): Promise<string>;
  /** The body as it arrives (consumes it); when the request's signal aborts, the iteration throws its reason. */
  chunks(): AsyncIterable<Uint8Array>;
  /** Frees the connection without reading the body. */
  discard(): void;
}

export class Transport {
  readonly #https: boolean;
  readonly #agent: HttpAgent | HttpsAgent;

  constructor(server: string, tls: TlsSettings) {
    this.#https = new URL(server).protocol === 'https:';
    // A pooled connection idle for 30 s is closed by us, before any server-side idle timeout could close it under a
    // request just handed to it (the agent applies the timeout to free sockets only; active ones, watches included,
    // merely get a 'timeout' event nobody listens to).
    const pooling = { keepAlive: true, timeout: 30_000 };
    this.#agent = this.#https
      ? new HttpsAgent({
          ...pooling,
          ...(tls.ca ? { ca: tls.ca } : {}),
          ...(tls.cert ? { cert: tls.cert } : {}),
          ...(tls.key ? { key: tls.key } : {}),
          ...(tls.serverName ? { servername: tls.serverName } : {}),
          rejectUnauthorized: !tls.insecureSkipTlsVerify,
        })
      : new HttpAgent(pooling);
  }

  send(req: TransportRequest): Promise<TransportResponse> {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(req.body));
    const send = this.#https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const outgoing = send(
        req.url,
        { method: req.method, headers, agent: this.#agent, signal: req.signal },
        (incoming) => resolve(response(incoming, req.signal)),
      );
      outgoing.on('error', (err) => reject(abortReason(req.signal, err)));
      outgoing.end(req.body);
    });
  }

  /** Closes pooled connections; requests in flight are not waited for. */
  close(): void {
    this.#agent.destroy();
  }
}

function response(incoming: IncomingMessage, signal: AbortSignal): TransportResponse {
  async function* chunks(): AsyncIterable<Uint8Array> {
    try {
      for await (const chunk of incoming) yield chunk as Buffer;
    } catch (err) {
      throw abortReason(signal, err);
    }
  }
  return {
    status: incoming.statusCode ?? 0,
    async text() {
      const parts: Uint8Array[] = [];
      for await (const chunk of chunks()) parts.push(chunk);
      return Buffer.concat(parts).toString('utf8');
    },
    chunks,
    discard: () => {
      incoming.resume();
    },
  };
}

/** An error caused by the caller's signal is the signal's reason (AbortError, TimeoutError), as fetch reports it. */
function abortReason(signal: AbortSignal, err: unknown): unknown {
  return signal.aborted && signal.reason !== undefined ? signal.reason : err;
}
