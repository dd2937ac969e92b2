import {
  accessFromKubeConfigLike,
  type ClusterAccess,
  isKubeConfigLike,
  type KubeConfigLike,
} from './cluster-access.ts';
import type { RuntimeMetrics } from './metrics.ts';
import {
  collectionPath,
  type KubeObject,
  type ObjectRef,
  objectPath,
  type ResourceType,
} from './resource.ts';
import { Transport, type TransportResponse } from './transport.ts';

/** A non-2xx answer from the apiserver, carrying the metav1.Status reason when there is one. */
export class ApiError extends Error {
  readonly status: number;
  readonly reason: string | undefined;
  readonly body: unknown;

  constructor(status: number, method: string, path: string, body: unknown) {
    const statusBody = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const message = typeof statusBody.message === 'string' ? statusBody.message : String(body ?? '');
    super(`${method} ${path}: ${status} ${message}`.trim());
    this.name = 'ApiError';
    this.status = status;
    this.reason = typeof statusBody.reason === 'string' ? statusBody.reason : undefined;
    this.body = body;
  }
}

/**
 * A write this process may no longer send: its leadership (the Lease it holds) may have passed to another replica.
 * Raised before anything reaches the apiserver, so the write did not happen.
 */
export class WriteFencedError extends Error {
  constructor(method: string, path: string, why: string) {
    super(`${method} ${path} not sent: ${why}`);
    this.name = 'WriteFencedError';
  }
}

/** Says why writes are refused now, or undefined when they may go. */
export type WriteFence = () => string | undefined;

export function isStatus(err: unknown, status: number): boolean {
  return err instanceof ApiError && err.status === status;
}

/**
 * A create refused because its namespace is being deleted (NamespaceLifecycle admission: 403 with the cause
 * NamespaceTerminating). Updates, patches and deletes are still allowed there; no create is, Events included.
 */
export function isNamespaceTerminating(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.status !== 403) return false;
  // metav1.StatusCause serializes its Type as `reason`.
  const causes = (err.body as { details?: { causes?: { reason?: string }[] } } | undefined)?.details?.causes;
  return causes?.some((c) => c.reason === 'NamespaceTerminating') ?? false;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** Bound on the whole request, body included; a paused apiserver must not hang a caller forever. */
  timeoutMs?: number;
  /** Send even while the write fence is closed: only the leader election's own Lease writes. */
  unfenced?: boolean;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  signal?: AbortSignal;
}

export interface ListResult<T> {
  items: T[];
  metadata: { resourceVersion?: string; continue?: string };
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  timeoutSeconds?: number;
  signal?: AbortSignal;
  /** Bound on getting the response headers; after that the caller's own inactivity bound applies. */
  connectTimeoutMs?: number;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  signal?: AbortSignal;
}

export type PatchType = 'merge' | 'json' | 'strategic';
const patchContentType: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export interface KubeHttpOptions {
  metrics?: RuntimeMetrics;
  requestTimeoutMs?: number;
  /** The User-Agent the apiserver logs and audits, e.g. `my-operator/1.2.3`; omitted: the HTTP library's own. */
  userAgent?: string;
}

export type HttpMethod = 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

const authRefreshMs = 60_000;

/**
 * Thin authenticated JSON/streaming client for the apiserver. `access` (the pod's ServiceAccount, a kubeconfig, or a
 * client-node KubeConfig a test holds) supplies the server, TLS and credentials; node:http(s) carries the requests.
 */
export class KubeHttp {
  readonly server: string;
  readonly #access: ClusterAccess;
  readonly #host: string;
  readonly #transport: Transport;
  readonly #metrics: RuntimeMetrics | undefined;
  readonly #requestTimeoutMs: number;
  readonly #userAgent: string | undefined;
  #auth: { value: Promise<Record<string, string>>; at: number } | undefined;
  #fence: WriteFence | undefined;

  constructor(access: ClusterAccess | KubeConfigLike, opts: KubeHttpOptions = {}) {
    this.#access = isKubeConfigLike(access) ? accessFromKubeConfigLike(access) : access;
    this.server = this.#access.server.replace(/\/+$/, '');
    this.#host = new URL(this.server).host;
    this.#transport = new Transport(this.server, this.#access.tls);
    this.#metrics = opts.metrics;
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.#userAgent = opts.userAgent;
  }

  /**
   * Every later write (not GET) asks `fence` first, right before it is handed to the socket, and is refused with a
   * WriteFencedError while it says why not. The leader election sets it: a replica whose lease may have expired
   * (e.g. it was paused past it) must not write, whatever its in-flight work does next.
   */
  setWriteFence(fence: WriteFence | undefined): void {
    this.#fence = fence;
  }

  /**
   * Throws WriteFencedError while the fence is closed: for a write that does not go through this client (a SQL
   * statement the operator sends a database), checked right before it is sent.
   */
  assertMayWrite(what: string): void {
    const fenced = this.#fence?.();
    if (fenced !== undefined) throw new WriteFencedError('SQL', what, fenced);
  }

  async request<T>(method: HttpMethod, path: string, opts: RequestOptions = {}): Promise<T> {
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.#requestTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const response = await this.#send(method, path, opts, signal);
    const text = await response.text();
    const body = text.length > 0 ? parseJson(text) : undefined;
    if (response.status < 200 || response.status >= 300) {
      throw new ApiError(response.status, method, path, body);
    }
    return body as T;
  }

  list<T extends KubeObject>(rt: ResourceType, opts: ListOptions = {}): Promise<ListResult<T>> {
    return this.request('GET', collectionPath(rt, opts.namespace), {
      signal: opts.signal,
      query: {
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit,
        continue: opts.continue,
        resourceVersion: opts.resourceVersion,
      },
    });
  }

  get<T extends KubeObject>(rt: ResourceType, ref: ObjectRef, subresource?: string): Promise<T> {
    return this.request('GET', objectPath(rt, ref, subresource));
  }

  create<T extends KubeObject>(
    rt: ResourceType,
    obj: T,
    opts: { fieldManager?: string; unfenced?: boolean } = {},
  ): Promise<T> {
    return this.request('POST', collectionPath(rt, obj.metadata.namespace), {
      body: obj,
      query: { fieldManager: opts.fieldManager },
      unfenced: opts.unfenced,
    });
  }

  replace<T extends KubeObject>(
    rt: ResourceType,
    obj: T,
    opts: { subresource?: string; unfenced?: boolean } = {},
  ): Promise<T> {
    const ref = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
    return this.request('PUT', objectPath(rt, ref, opts.subresource), {
      body: obj,
      unfenced: opts.unfenced,
    });
  }

  /** Server-side apply. JSON is valid YAML, so the object is sent as-is with the apply-patch content type. */
  apply<T extends KubeObject>(
    rt: ResourceType,
    obj: KubeObject,
    opts: { fieldManager: string; force?: boolean; subresource?: string },
  ): Promise<T> {
    const ref = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
    return this.request('PATCH', objectPath(rt, ref, opts.subresource), {
      body: obj,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: opts.fieldManager, force: opts.force ?? true },
    });
  }

  patch<T extends KubeObject>(
    rt: ResourceType,
    ref: ObjectRef,
    patch: unknown,
    type: PatchType,
    opts: { subresource?: string; fieldManager?: string } = {},
  ): Promise<T> {
    return this.request('PATCH', objectPath(rt, ref, opts.subresource), {
      body: patch,
      contentType: patchContentType[type],
      query: { fieldManager: opts.fieldManager },
    });
  }

  delete(rt: ResourceType, ref: ObjectRef, opts: DeleteOptions = {}): Promise<unknown> {
    return this.request('DELETE', objectPath(rt, ref), {
      signal: opts.signal,
      body: {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        preconditions: opts.preconditions,
        propagationPolicy: opts.propagationPolicy,
      },
    });
  }

  /**
   * Opens a watch with bookmarks and yields its events. The stream ends when the server closes it; aborting
   * `signal` ends it too (the pending read rejects with an AbortError).
   */
  async watch<T extends KubeObject>(
    rt: ResourceType,
    opts: WatchOptions,
  ): Promise<AsyncIterable<WatchEvent<T>>> {
    const connect = new AbortController();
    const connectTimer = setTimeout(
      () => connect.abort(new DOMException('watch connect timeout', 'TimeoutError')),
      opts.connectTimeoutMs ?? this.#requestTimeoutMs,
    );
    const signal = opts.signal ? AbortSignal.any([opts.signal, connect.signal]) : connect.signal;
    const path = collectionPath(rt, opts.namespace);
    let response: TransportResponse;
    try {
      response = await this.#send(
        'GET',
        path,
        {
          query: {
            watch: true,
            allowWatchBookmarks: true,
            resourceVersion: opts.resourceVersion,
            timeoutSeconds: opts.timeoutSeconds,
            labelSelector: opts.labelSelector,
            fieldSelector: opts.fieldSelector,
          },
        },
        signal,
      );
    } finally {
      clearTimeout(connectTimer);
    }
    if (response.status !== 200) {
      const text = await response.text().catch(() => '');
      throw new ApiError(response.status, 'WATCH', path, text ? parseJson(text) : undefined);
    }
    return readLines<T>(response.chunks());
  }

  async #send(
    method: HttpMethod,
    path: string,
    opts: RequestOptions,
    signal: AbortSignal,
  ): Promise<TransportResponse> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { ...(await this.#authentication()), Accept: 'application/json' };
    if (this.#userAgent) headers['User-Agent'] = this.#userAgent;
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      body = JSON.stringify(opts.body);
    }
    const verb = opts.query?.watch ? 'WATCH' : method;
    // After the last await before sending: a process paused anywhere above is judged on the clock as it resumes.
    const fenced = !opts.unfenced && !READ_METHODS.has(method) ? this.#fence?.() : undefined;
    if (fenced !== undefined) throw new WriteFencedError(method, path, fenced);
    try {
      const response = await this.#transport.send({
        method,
        url,
        headers,
        signal,
        ...(body !== undefined ? { body } : {}),
      });
      this.#metrics?.restClientRequests.inc({
        code: String(response.status),
        method: verb,
        host: this.#host,
      });
      return response;
    } catch (err) {
      this.#metrics?.restClientRequests.inc({ code: '<error>', method: verb, host: this.#host });
      throw err;
    }
  }

  /**
   * The credentials' headers, read again once a minute: a rotated token is followed without re-reading its file on
   * every request. A failed read is not cached.
   */
  #authentication(): Promise<Record<string, string>> {
    const now = Date.now();
    if (this.#auth && now - this.#auth.at < authRefreshMs) return this.#auth.value;
    const value = this.#access.credentials();
    this.#auth = { value, at: now };
    value.catch(() => {
      if (this.#auth?.value === value) this.#auth = undefined;
    });
    return value;
  }

  /** Releases pooled connections. */
  async close(): Promise<void> {
    this.#auth = undefined;
    this.#transport.close();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function* readLines<T>(chunks: AsyncIterable<Uint8Array>): AsyncIterable<WatchEvent<T>> {
  const decoder = new TextDecoder();
  let buffered = '';
  // Leaving the loop early (the caller stops reading) ends the response, which frees its connection.
  for await (const value of chunks) {
    buffered += decoder.decode(value, { stream: true });
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line) yield JSON.parse(line) as WatchEvent<T>;
      newline = buffered.indexOf('\n');
    }
  }
  const rest = (buffered + decoder.decode()).trim();
  if (rest) yield JSON.parse(rest) as WatchEvent<T>;
}
