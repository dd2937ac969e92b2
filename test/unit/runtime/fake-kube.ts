import { ApiError, type KubeHttp, type ListResult, type WatchEvent } from '../../../src/runtime/http.ts';
import type { KubeObject, ResourceType } from '../../../src/runtime/resource.ts';
import { objectKey } from '../../../src/runtime/resource.ts';

/**
 * Fake transport for unit tests: an in-memory apiserver for one resource with LIST (paginated), WATCH from a
 * resourceVersion, compaction (410 Gone), and a switch that makes new watches hang silently.
 */
export class FakeKube {
  readonly objects = new Map<string, KubeObject>();
  readonly history: { rv: number; plural: string; event: WatchEvent<KubeObject> }[] = [];
  rv = 100;
  compactedRv = 0;
  hangWatches = false;
  listCalls = 0;
  watchCalls = 0;
  readonly #open = new Map<
    (e: WatchEvent<KubeObject> | 'close') => void,
    { plural: string; namespace: string | undefined }
  >();

  put(name: string, data: Record<string, unknown> = {}, namespace = 'ns', plural = 'configmaps'): KubeObject {
    const key = `${plural}:${namespace}/${name}`;
    const existing = this.objects.get(key);
    const obj: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace,
        uid: existing?.metadata.uid ?? `uid-${name}`,
        resourceVersion: String(++this.rv),
      },
      ...data,
    };
    this.objects.set(key, obj);
    this.#publish(plural, { type: existing ? 'MODIFIED' : 'ADDED', object: obj });
    return obj;
  }

  remove(name: string, namespace = 'ns', plural = 'configmaps'): void {
    const key = `${plural}:${namespace}/${name}`;
    const existing = this.objects.get(key);
    if (!existing) return;
    this.objects.delete(key);
    const obj = { ...existing, metadata: { ...existing.metadata, resourceVersion: String(++this.rv) } };
    this.#publish(plural, { type: 'DELETED', object: obj });
  }

  /** Forgets history: watches from an older resourceVersion now get 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv;
  }

  closeWatches(): void {
    for (const send of this.#open.keys()) send('close');
  }

  bookmark(): void {
    for (const send of this.#open.keys())
      send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(this.rv) } } });
  }

  get openWatches(): number {
    return this.#open.size;
  }

  #publish(plural: string, event: WatchEvent<KubeObject>): void {
    this.history.push({ rv: this.rv, plural, event });
    for (const [send, watched] of this.#open) {
      if (watched.plural === plural && inNamespace(event.object, watched.namespace)) send(event);
    }
  }

  asHttp(): KubeHttp {
    return this as unknown as KubeHttp;
  }

  async list(
    rt: ResourceType,
    opts: { limit?: number; continue?: string; namespace?: string },
  ): Promise<ListResult<KubeObject>> {
    this.listCalls++;
    const all = [...this.objects.entries()]
      .filter(([key, o]) => key.startsWith(`${rt.plural}:`) && inNamespace(o, opts.namespace))
      .map(([, o]) => o)
      .sort((a, b) => objectKey(a).localeCompare(objectKey(b)));
    const start = opts.continue ? Number(opts.continue) : 0;
    const end = opts.limit ? start + opts.limit : all.length;
    // Real LIST items carry no apiVersion/kind.
    const items = all.slice(start, end).map(({ apiVersion: _a, kind: _k, ...rest }) => rest as KubeObject);
    return {
      items,
      metadata: { resourceVersion: String(this.rv), continue: end < all.length ? String(end) : undefined },
    };
  }

  async watch(
    rt: ResourceType,
    opts: { resourceVersion?: string; signal?: AbortSignal; namespace?: string },
  ): Promise<AsyncIterable<WatchEvent<KubeObject>>> {
    this.watchCalls++;
    const from = Number(opts.resourceVersion ?? 0);
    if (from < this.compactedRv) throw new ApiError(410, 'WATCH', '/fake', { reason: 'Expired', code: 410 });
    const buffered: (WatchEvent<KubeObject> | 'close')[] = this.hangWatches
      ? []
      : this.history
          .filter((h) => h.rv > from && h.plural === rt.plural && inNamespace(h.event.object, opts.namespace))
          .map((h) => h.event);
    const hang = this.hangWatches;
    let wake: (() => void) | undefined;
    const send = (e: WatchEvent<KubeObject> | 'close') => {
      if (hang) return;
      buffered.push(e);
      wake?.();
    };
    this.#open.set(send, { plural: rt.plural, namespace: opts.namespace });
    const open = this.#open;
    const signal = opts.signal;
    async function* events(): AsyncIterable<WatchEvent<KubeObject>> {
      try {
        for (;;) {
          while (buffered.length > 0) {
            const next = buffered.shift()!;
            if (next === 'close') return;
            yield next;
          }
          await new Promise<void>((resolve, reject) => {
            wake = resolve;
            if (signal?.aborted) reject(signal.reason);
            signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
          });
        }
      } finally {
        open.delete(send);
      }
    }
    return events();
  }
}

function inNamespace(obj: KubeObject, namespace: string | undefined): boolean {
  return namespace === undefined || obj.metadata.namespace === namespace;
}

export async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
