// A test standing in for the kubelet, for the pods kwok was told to leave alone (ControlPlaneOptions.kwokPodSelector):
// it notices pods scheduled to the fake node, lets the test decide what happens to each, and reports the outcome in
// the pod's status exactly where a kubelet would (phase, container state, termination message).
import type { V1Pod } from '@kubernetes/client-node';
import { KubeHttp, type KubeObject, PODS } from '../../../src/runtime/index.ts';
import type { TestCluster } from './cluster.ts';

export const POD_RESOURCE = PODS;
type Pod = V1Pod & KubeObject;

export type PodHandler = (pod: Pod, kubelet: FakeKubelet) => Promise<void>;

/** A running pod's status with every container ready; no podIP (markReady adds one). */
export function readyPodStatus(pod: Pod): Record<string, unknown> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    phase: 'Running',
    startTime: now,
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
      type,
      status: 'True',
      lastTransitionTime: now,
    })),
    containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      image: c.image,
      imageID: '',
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: now } },
    })),
  };
}

export class FakeKubelet {
  readonly http: KubeHttp;
  readonly #handlers: Array<{ matches: (pod: Pod) => boolean; handle: PodHandler }> = [];
  readonly #seen = new Set<string>();
  readonly #running = new Set<Promise<void>>();
  readonly errors: unknown[] = [];
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(cluster: TestCluster) {
    this.http = new KubeHttp(cluster.kubeConfig());
  }

  /** The first matching handler takes a pod, once. */
  on(matches: (pod: Pod) => boolean, handle: PodHandler): void {
    this.#handlers.push({ matches, handle });
  }

  start(intervalMs = 200): void {
    this.#timer = setInterval(() => void this.#poll(), intervalMs);
  }

  /** Waits a bounded time for handlers: one still held by a gate of a failed test must not hang the teardown. */
  async stop(timeoutMs = 10_000): Promise<void> {
    clearInterval(this.#timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.#running]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    await this.http.close();
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      const pods = await this.http.list<Pod>(POD_RESOURCE);
      for (const pod of pods.items) {
        const uid = pod.metadata.uid ?? '';
        if (this.#seen.has(uid) || !pod.spec?.nodeName || pod.metadata.deletionTimestamp) continue;
        if (pod.status?.phase !== 'Pending') continue;
        const handler = this.#handlers.find((h) => h.matches(pod));
        if (!handler) continue;
        this.#seen.add(uid);
        const run = handler.handle(pod, this).catch((err: unknown) => {
          this.errors.push(err);
        });
        this.#running.add(run);
        void run.finally(() => this.#running.delete(run));
      }
    } catch (err) {
      this.errors.push(err);
    } finally {
      this.#polling = false;
    }
  }

  /** Running and Ready, as after the readiness probe passed. */
  async markReady(pod: Pod): Promise<void> {
    await this.#patchStatus(pod, { ...readyPodStatus(pod), podIP: '10.244.0.200' });
  }

  /** The container exited: Succeeded or Failed with its termination message, as the kubelet reports it. */
  async finish(pod: Pod, exitCode: number, message: string): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await this.#patchStatus(pod, {
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      startTime: now,
      conditions: [
        { type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: now },
        { type: 'ContainersReady', status: 'False', reason: 'PodCompleted', lastTransitionTime: now },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
      ],
      containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: false,
        started: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode,
            reason: exitCode === 0 ? 'Completed' : 'Error',
            message,
            startedAt: now,
            finishedAt: now,
          },
        },
      })),
    });
  }

  async #patchStatus(pod: Pod, status: Record<string, unknown>): Promise<void> {
    await this.http.patch(
      POD_RESOURCE,
      { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '' },
      { status },
      'merge',
      { subresource: 'status' },
    );
  }
}

/** Resolves on `open()`: lets a test hold a pod in its running state until it decides. */
export class Gate {
  readonly #opened: Promise<void>;
  #open!: () => void;
  isOpen = false;

  constructor() {
    this.#opened = new Promise((resolve) => {
      this.#open = resolve;
    });
  }

  open(): void {
    this.isOpen = true;
    this.#open();
  }

  wait(): Promise<void> {
    return this.#opened;
  }
}
