import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import type { BackoffOptions } from './backoff.ts';
import { InformerCache } from './cache.ts';
import { Client } from './client.ts';
import type { ClusterAccess, KubeConfigLike } from './cluster-access.ts';
import { Controller, type ControllerOptions } from './controller.ts';
import { describeError } from './errors.ts';
import { HealthServer } from './health.ts';
import { KubeHttp } from './http.ts';
import { kubeLeaseApi, LeaderElector, leaseResource } from './leader.ts';
import { createLogger, type Logger } from './logger.ts';
import { type RuntimeMetrics, runtimeMetrics } from './metrics.ts';
import type { KubeObject } from './resource.ts';
import { Watcher } from './watcher.ts';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ManagerOptions {
  /** How to reach the apiserver: `inClusterAccess()`, `kubeconfigFileAccess(path)`, or a client-node KubeConfig. */
  kubeConfig: ClusterAccess | KubeConfigLike;
  /** Omit to run without leader election (a single replica). */
  leaderElection?: LeaderElectionOptions;
  /** Port of /metrics, /healthz, /readyz; 0 picks a free one; omit for no server. */
  healthPort?: number;
  healthHost?: string;
  /** Restrict namespaced watches to one namespace. */
  namespace?: string;
  /** Restrict namespaced watches to these namespaces (one watch each); empty or omitted: all namespaces. */
  namespaces?: readonly string[];
  registry?: Registry;
  logger?: Logger;
  /** How long SIGTERM waits for in-flight reconciles. Default 30 s. */
  shutdownTimeoutMs?: number;
  requestTimeoutMs?: number;
  watch?: {
    timeoutSeconds?: number;
    stallTimeoutMs?: number;
    backoff?: Partial<BackoffOptions>;
    pageSize?: number;
  };
  /** Owner of the fields the controllers apply, and the Events' reportingController: the operator's name. */
  fieldManager: string;
  /** User-Agent of every request, e.g. `my-operator/1.2.3`. Default: the field manager. */
  userAgent?: string;
}

/** How long a stopping manager waits for queued Event writes (after the reconciles drained). */
const EVENT_FLUSH_TIMEOUT_MS = 5_000;

/**
 * Composition of the runtime: caches start and sync on every replica (a standby stays warm), the elected leader runs
 * the controllers' workers, and stop() (SIGTERM) stops intake, drains in-flight work, releases the lease and resolves.
 */
export class Manager {
  readonly http: KubeHttp;
  readonly cache: InformerCache;
  readonly client: Client;
  readonly registry: Registry;
  readonly metrics: RuntimeMetrics;
  readonly logger: Logger;
  readonly identity: string;
  readonly #opts: ManagerOptions;
  readonly #controllers: Controller[] = [];
  readonly #stop = new AbortController();
  #health: HealthServer | undefined;
  #healthPort: number | undefined;
  #elector: LeaderElector | undefined;
  #running: Promise<void> | undefined;

  constructor(opts: ManagerOptions) {
    this.#opts = opts;
    this.registry = opts.registry ?? new Registry();
    this.metrics = runtimeMetrics(this.registry);
    this.logger = opts.logger ?? createLogger();
    this.identity = opts.leaderElection?.identity ?? `${hostname()}_${randomUUID()}`;
    this.http = new KubeHttp(opts.kubeConfig, {
      metrics: this.metrics,
      requestTimeoutMs: opts.requestTimeoutMs,
      userAgent: opts.userAgent ?? opts.fieldManager,
    });
    this.cache = new InformerCache({
      http: this.http,
      logger: this.logger,
      metrics: this.metrics,
      namespace: opts.namespace,
      namespaces: opts.namespaces,
      ...opts.watch,
    });
    // With leader election every write but the Lease's waits for proof of leadership, checked as it is sent: the
    // workers' abort signal tells well-behaved work to stop, the fence stops whatever work does not (or has not yet).
    if (opts.leaderElection)
      this.http.setWriteFence(() =>
        this.#elector ? this.#elector.writeFence() : 'not the leader (election not started)',
      );
    this.client = new Client({
      http: this.http,
      cache: this.cache,
      fieldManager: opts.fieldManager,
      reportingInstance: this.identity,
      events: { logger: this.logger, dropped: this.metrics.eventsDropped },
    });
  }

  addController(opts: ControllerOptions): Controller {
    const controller = new Controller(opts, {
      cache: this.cache,
      logger: this.logger,
      metrics: this.metrics,
    });
    this.#controllers.push(controller);
    return controller;
  }

  get healthPort(): number | undefined {
    return this.#healthPort;
  }

  get isLeader(): boolean {
    return this.#elector ? this.#elector.isLeader : this.#controllers.some((c) => c.running);
  }

  /** Runs until stop() or `signal`; resolves once shut down cleanly. */
  start(signal?: AbortSignal): Promise<void> {
    signal?.addEventListener('abort', () => this.stop(), { once: true });
    this.#running ??= this.#run();
    return this.#running;
  }

  stop(): void {
    if (!this.#stop.signal.aborted) this.logger.info('shutdown requested');
    this.#stop.abort();
  }

  /** SIGTERM/SIGINT → graceful stop. Returns a function that removes the handlers. */
  installSignalHandlers(): () => void {
    const onSignal = (sig: NodeJS.Signals) => {
      this.logger.info({ signal: sig }, 'signal received');
      this.stop();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    return () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    };
  }

  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    if (this.#opts.healthPort !== undefined) {
      this.#health = new HealthServer({
        port: this.#opts.healthPort,
        host: this.#opts.healthHost,
        registry: this.registry,
        liveness: [{ name: 'ping', check: () => undefined }],
        readiness: [
          {
            name: 'informers-synced',
            check: () => (this.cache.synced ? undefined : `unsynced: ${this.cache.unsynced().join(', ')}`),
          },
          {
            name: 'watches-live',
            check: () => {
              const stalled = this.cache.stalled();
              return stalled.length === 0 ? undefined : `stalled: ${stalled.join(', ')}`;
            },
          },
        ],
      });
      this.#healthPort = await this.#health.start();
      this.logger.info({ port: this.#healthPort }, 'health server listening');
    }

    this.cache.start();
    let leaseWatcher: Watcher<KubeObject> | undefined;
    try {
      if (!(await this.cache.waitForSync(stop))) return;
      const shutdownTimeoutMs = this.#opts.shutdownTimeoutMs ?? 30_000;
      const le = this.#opts.leaderElection;
      if (!le) {
        this.#startWorkers();
        await new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }));
        await this.#stopWorkers(shutdownTimeoutMs);
        return;
      }
      this.#elector = new LeaderElector({
        identity: this.identity,
        name: le.name,
        api: kubeLeaseApi(this.http, le.namespace, le.name),
        leaseDurationMs: le.leaseDurationMs,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
        logger: this.logger,
        metrics: this.metrics,
        onStartedLeading: () => this.#startWorkers(),
        onStoppedLeading: () =>
          this.#stopWorkers(stop.aborted ? shutdownTimeoutMs : (le.renewDeadlineMs ?? 10_000)),
      });
      // Watching the Lease lets a standby see a release (or a renewal) the moment it happens instead of polling.
      leaseWatcher = new Watcher<KubeObject>({
        http: this.http,
        resource: leaseResource,
        namespace: le.namespace,
        fieldSelector: `metadata.name=${le.name}`,
        logger: this.logger,
        timeoutSeconds: this.#opts.watch?.timeoutSeconds,
        stallTimeoutMs: this.#opts.watch?.stallTimeoutMs,
      });
      const elector = this.#elector;
      leaseWatcher.onChange(() => elector.poke());
      leaseWatcher.start();
      await elector.run(stop);
    } catch (err) {
      this.logger.error({ err: describeError(err) }, 'manager failed');
      throw err;
    } finally {
      for (const c of this.#controllers) c.queue.shutDown();
      await leaseWatcher?.stop();
      await this.cache.stop();
      await this.#health?.stop();
      await this.http.close();
      this.logger.info('manager stopped');
    }
  }

  #startWorkers(): void {
    for (const c of this.#controllers) c.startWorkers();
  }

  async #stopWorkers(timeoutMs: number): Promise<void> {
    const stopping = this.#stop.signal.aborted;
    const drained = await Promise.all(
      this.#controllers.map((c) => (stopping ? c.shutdown(timeoutMs) : c.stopWorkers(timeoutMs))),
    );
    if (!drained.every(Boolean))
      this.logger.warn({ timeoutMs }, 'in-flight reconciles did not finish in time');
    if (stopping) await this.#flushEvents();
  }

  /**
   * The Events the drained reconciles recorded are still being written: give them a moment. Here, not after
   * elector.run: once the lease is released the write fence refuses them.
   */
  async #flushEvents(): Promise<void> {
    const pending = this.client.pendingEvents;
    if (!(await this.client.flushEvents(EVENT_FLUSH_TIMEOUT_MS)))
      this.logger.warn(
        { pending, left: this.client.pendingEvents, timeoutMs: EVENT_FLUSH_TIMEOUT_MS },
        'events not all recorded before shutdown',
      );
  }
}
