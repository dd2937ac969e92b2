import {
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  type KubeConfig,
  RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import type { RuntimeMetrics } from './metrics.ts';
import {
  collectionPath,
  type KubeObject,
  type ObjectRef,
  objectPath,
  type ResourceType,
} from './resource.ts';

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

const READ_METHODS: ReadonlySet<string> = new Set([HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS]);

type Auth = { headers: Record<string, string>; dispatcher: ReturnType<RequestContext['getDispatcher']> };
const authRefreshMs = 60_000;

/**
 * Thin authenticated JSON/streaming client for the apiserver. KubeConfig supplies auth and TLS; the HTTP library is
 * client-node's own (undici) so no second transport is bundled.
 */
export class KubeHttp {
  readonly server: string;
  readonly #kc: KubeConfig;
  readonly #host: string;
  readonly #library = new IsomorphicFetchHttpLibrary();
  readonly #metrics: RuntimeMetrics | undefined;
  readonly #requestTimeoutMs: number;
  readonly #userAgent: string | undefined;
  #auth: { value: Promise<Auth>; at: number } | undefined;
  #fence: WriteFence | undefined;

  constructor(kc: KubeConfig, opts: KubeHttpOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.#kc = kc;
    this.server = cluster.server.replace(/\/+$/, '');
    this.#host = new URL(this.server).host;
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
    const text = await response.body.text();
    const body = text.length > 0 ? parseJson(text) : undefined;
    if (response.httpStatusCode < 200 || response.httpStatusCode >= 300) {
      throw new ApiError(response.httpStatusCode, method, path, body);
    }
    return body as T;
  }

  list<T extends KubeObject>(rt: ResourceType, opts: ListOptions = {}): Promise<ListResult<T>> {
    return this.request(HttpMethod.GET, collectionPath(rt, opts.namespace), {
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
    return this.request(HttpMethod.GET, objectPath(rt, ref, subresource));
  }

  create<T extends KubeObject>(
    rt: ResourceType,
    obj: T,
    opts: { fieldManager?: string; unfenced?: boolean } = {},
  ): Promise<T> {
    return this.request(HttpMethod.POST, collectionPath(rt, obj.metadata.namespace), {
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
    return this.request(HttpMethod.PUT, objectPath(rt, ref, opts.subresource), {
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
    return this.request(HttpMethod.PATCH, objectPath(rt, ref, opts.subresource), {
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
    return this.request(HttpMethod.PATCH, objectPath(rt, ref, opts.subresource), {
      body: patch,
      contentType: patchContentType[type],
      query: { fieldManager: opts.fieldManager },
    });
  }

  delete(rt: ResourceType, ref: ObjectRef, opts: DeleteOptions = {}): Promise<unknown> {
    return this.request(HttpMethod.DELETE, objectPath(rt, ref), {
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
    let response: ResponseContext;
    try {
      response = await this.#send(
        HttpMethod.GET,
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
    if (response.httpStatusCode !== 200) {
      const text = await response.body.text().catch(() => '');
      throw new ApiError(response.httpStatusCode, 'WATCH', path, text ? parseJson(text) : undefined);
    }
    const stream = response.body.stream();
    if (!stream) throw new ApiError(response.httpStatusCode, 'WATCH', path, 'no body');
    return readLines<T>(stream);
  }

  async #send(
    method: HttpMethod,
    path: string,
    opts: RequestOptions,
    signal: AbortSignal,
  ): Promise<ResponseContext> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const ctx = new RequestContext(url.toString(), method);
    const auth = await this.#authentication();
    for (const [k, v] of Object.entries(auth.headers)) ctx.setHeaderParam(k, v);
    if (auth.dispatcher) ctx.setDispatcher(auth.dispatcher);
    ctx.setHeaderParam('Accept', 'application/json');
    if (this.#userAgent) ctx.setHeaderParam('User-Agent', this.#userAgent);
    if (opts.body !== undefined) {
      ctx.setHeaderParam('Content-Type', opts.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(opts.body));
    }
    ctx.setSignal(signal);
    const verb = opts.query?.watch ? 'WATCH' : method;
    // After the last await before sending: a process paused anywhere above is judged on the clock as it resumes.
    const fenced = !opts.unfenced && !READ_METHODS.has(method) ? this.#fence?.() : undefined;
    if (fenced !== undefined) throw new WriteFencedError(method, path, fenced);
    try {
      const response = await this.#library.send(ctx).toPromise();
      this.#metrics?.restClientRequests.inc({
        code: String(response.httpStatusCode),
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
   * KubeConfig builds a fresh dispatcher (and re-reads credentials) on every call; reusing it keeps connections
   * pooled, and refreshing the headers every minute still follows rotated tokens.
   */
  #authentication(): Promise<Auth> {
    const now = Date.now();
    if (this.#auth && now - this.#auth.at < authRefreshMs) return this.#auth.value;
    const previous = this.#auth?.value;
    const value = (async () => {
      const ctx = new RequestContext(this.server, HttpMethod.GET);
      await this.#kc.applySecurityAuthentication(ctx);
      const prior = previous ? await previous.catch(() => undefined) : undefined;
      if (prior?.dispatcher) {
        await ctx.getDispatcher()?.close();
        return { headers: ctx.getHeaders(), dispatcher: prior.dispatcher };
      }
      return { headers: ctx.getHeaders(), dispatcher: ctx.getDispatcher() };
    })();
    this.#auth = { value, at: now };
    value.catch(() => {
      if (this.#auth?.value === value) this.#auth = undefined;
    });
    return value;
  }

  /** Releases pooled connections. */
  async close(): Promise<void> {
    const auth = await this.#auth?.value.catch(() => undefined);
    this.#auth = undefined;
    await auth?.dispatcher?.close();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function* readLines<T>(stream: ReadableStream<Uint8Array>): AsyncIterable<WatchEvent<T>> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  let buffered = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
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
  } finally {
    await reader.cancel().catch(() => {});
  }
}
