import { type Clock, realClock, sleep } from './clock.ts';
import { describeError } from './errors.ts';
import { ApiError, type KubeHttp } from './http.ts';
import { LEASES } from './kinds.ts';
import { type Logger, silentLogger } from './logger.ts';
import type { RuntimeMetrics } from './metrics.ts';
import type { KubeObject, ResourceType } from './resource.ts';
import { microTime } from './time.ts';

export const leaseResource: ResourceType = LEASES;

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface LeaseState {
  spec: LeaseSpec;
  resourceVersion: string;
}

/** The three calls the elector needs; a fake implements them in unit tests. Writes fail on a stale resourceVersion. */
export interface LeaseApi {
  get(): Promise<LeaseState | undefined>;
  create(spec: LeaseSpec): Promise<LeaseState>;
  update(spec: LeaseSpec, resourceVersion: string): Promise<LeaseState>;
}

interface LeaseObject extends KubeObject {
  spec?: LeaseSpec;
}

export function kubeLeaseApi(http: KubeHttp, namespace: string, name: string): LeaseApi {
  const ref = { namespace, name };
  const toState = (lease: LeaseObject): LeaseState => ({
    spec: lease.spec ?? {},
    resourceVersion: lease.metadata.resourceVersion ?? '',
  });
  return {
    async get() {
      try {
        return toState(await http.get<LeaseObject>(leaseResource, ref));
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return undefined;
        throw err;
      }
    },
    async create(spec) {
      const lease: LeaseObject = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec,
      };
      // The Lease is how leadership is proven, so its writes are the ones the write fence lets through.
      return toState(await http.create<LeaseObject>(leaseResource, lease, { unfenced: true }));
    },
    async update(spec, resourceVersion) {
      const lease: LeaseObject = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace, resourceVersion },
        spec,
      };
      return toState(await http.replace<LeaseObject>(leaseResource, lease, { unfenced: true }));
    },
  };
}

export interface LeaderElectorOptions {
  identity: string;
  api: LeaseApi;
  /** Label of leader_election_master_status. */
  name: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  clock?: Clock;
  random?: () => number;
  logger?: Logger;
  metrics?: RuntimeMetrics;
  onStartedLeading: () => void | Promise<void>;
  /** Must stop all leader-only work before resolving: the lease is released right after. */
  onStoppedLeading: () => void | Promise<void>;
}

/**
 * Lease-based leader election after client-go's: expiry is judged on our own clock from when we last saw the record
 * change (no cross-node clock comparison). Losing the lease stops the leader's work and campaigns again; the
 * process never exits because of it. On shutdown the lease is released so a standby takes over at once.
 */
export class LeaderElector {
  readonly #opts: LeaderElectorOptions;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #log: Logger;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  #observed: { spec: LeaseSpec; at: number } | undefined;
  #leading = false;
  /** Until when (our clock) no other candidate can have taken the lease we hold; see writeFence(). */
  #writableUntil = Number.NEGATIVE_INFINITY;
  #poke: AbortController = new AbortController();

  constructor(opts: LeaderElectorOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? realClock;
    this.#random = opts.random ?? Math.random;
    this.#log = (opts.logger ?? silentLogger).child({ lease: opts.name, identity: opts.identity });
    this.#leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.#retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    if (this.#renewDeadlineMs >= this.#leaseDurationMs)
      throw new Error('renewDeadline must be shorter than lease');
    opts.metrics?.leaderStatus.set({ name: opts.name }, 0);
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /**
   * Why this replica must not write now, or undefined while it may: it leads, and less than the renew deadline has
   * passed since the start of its last successful renewal. A standby counts the lease duration from when it saw that
   * renewal, which is later, so the margin (lease duration − renew deadline) covers a write's way to the apiserver.
   * Judged on the clock at each write, so a process paused past its lease (SIGSTOP, a long GC, a frozen VM) refuses
   * every write it resumes with, before its renew loop has even noticed the loss.
   */
  writeFence(): string | undefined {
    if (!this.#leading) return 'not the leader';
    const now = this.#clock.now();
    if (now < this.#writableUntil) return undefined;
    const ago = now - (this.#writableUntil - this.#renewDeadlineMs);
    return `leadership may have passed: the lease was last renewed ${Math.round(ago)} ms ago (renew deadline ${this.#renewDeadlineMs} ms)`;
  }

  /** Wakes a waiting campaign now, e.g. because a watch saw the Lease change (a release makes takeover immediate). */
  poke(): void {
    const previous = this.#poke;
    this.#poke = new AbortController();
    previous.abort();
  }

  /** Campaigns, leads, and campaigns again after a loss, until `signal` aborts; then stops leading and releases. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (!(await this.#acquire(signal))) break;
      this.#setLeading(true);
      this.#log.info('became leader');
      await this.#opts.onStartedLeading();
      await this.#renewUntilLost(signal);
      // Lost: writes stop now, before the work is drained. Shutting down, we still hold the lease: the drain may
      // finish its writes while the fence says the lease is ours, then we release it.
      const shuttingDown = signal.aborted;
      if (!shuttingDown) this.#setLeading(false);
      await this.#opts.onStoppedLeading();
      if (shuttingDown) {
        this.#setLeading(false);
        await this.#release();
        break;
      }
      this.#log.warn('lost leadership; campaigning again');
    }
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew()) return true;
      const jittered = this.#retryPeriodMs * (1 + 0.2 * this.#random());
      // Wake exactly when the current holder's lease expires rather than up to one retry period later.
      const untilExpiry = this.#msUntilExpiry();
      const wait = untilExpiry !== undefined ? Math.min(jittered, untilExpiry + 1) : jittered;
      await sleep(this.#clock, wait, AbortSignal.any([signal, this.#poke.signal]));
    }
    return false;
  }

  async #renewUntilLost(signal: AbortSignal): Promise<void> {
    let lastRenew = this.#clock.now();
    while (!signal.aborted) {
      await sleep(this.#clock, this.#retryPeriodMs, signal);
      if (signal.aborted) return;
      const remaining = this.#renewDeadlineMs - (this.#clock.now() - lastRenew);
      const renewed = remaining > 0 && (await this.#withDeadline(this.#tryAcquireOrRenew(), remaining));
      if (renewed) {
        lastRenew = this.#clock.now();
        continue;
      }
      const held = this.#observed?.spec.holderIdentity;
      if (held && held !== this.#opts.identity) {
        this.#log.warn({ holder: held }, 'lease taken by another candidate');
        return;
      }
      if (this.#clock.now() - lastRenew >= this.#renewDeadlineMs) {
        this.#log.warn({ renewDeadlineMs: this.#renewDeadlineMs }, 'failed to renew lease within deadline');
        return;
      }
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { api, identity } = this.#opts;
    const now = this.#clock.now();
    const leaseDurationSeconds = Math.ceil(this.#leaseDurationMs / 1000);
    try {
      const current = await api.get();
      if (!current) {
        const spec: LeaseSpec = {
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: microTime(new Date(now)),
          renewTime: microTime(new Date(now)),
          leaseTransitions: 0,
        };
        await api.create(spec);
        this.#observed = { spec, at: this.#clock.now() };
        this.#writableUntil = now + this.#renewDeadlineMs;
        return true;
      }
      if (!this.#observed || !sameRecord(this.#observed.spec, current.spec)) {
        this.#observed = { spec: current.spec, at: now };
      }
      const holder = current.spec.holderIdentity;
      if (holder && holder !== identity && (this.#msUntilExpiry() ?? 0) > 0) return false;
      const ours = holder === identity;
      const spec: LeaseSpec = {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: ours && current.spec.acquireTime ? current.spec.acquireTime : microTime(new Date(now)),
        renewTime: microTime(new Date(now)),
        leaseTransitions: (current.spec.leaseTransitions ?? 0) + (ours ? 0 : 1),
      };
      await api.update(spec, current.resourceVersion);
      this.#observed = { spec, at: this.#clock.now() };
      // From before the GET: the record we wrote cannot have been seen by anyone earlier than that.
      this.#writableUntil = now + this.#renewDeadlineMs;
      return true;
    } catch (err) {
      this.#log.debug({ err: describeError(err) }, 'lease acquire/renew attempt failed');
      return false;
    }
  }

  #msUntilExpiry(): number | undefined {
    const observed = this.#observed;
    if (!observed?.spec.holderIdentity) return undefined;
    const durationMs = (observed.spec.leaseDurationSeconds ?? this.#leaseDurationMs / 1000) * 1000;
    return observed.at + durationMs - this.#clock.now();
  }

  async #release(): Promise<void> {
    const { api, identity } = this.#opts;
    try {
      const current = await this.#withDeadline(api.get(), this.#renewDeadlineMs);
      if (!current || current.spec.holderIdentity !== identity) return;
      const now = microTime(new Date(this.#clock.now()));
      // client-go's ReleaseOnCancel: an empty holder is acquirable at once, the 1 s duration covers old clients.
      await api.update(
        { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
        current.resourceVersion,
      );
      this.#log.info('released lease');
    } catch (err) {
      this.#log.warn({ err: describeError(err) }, 'failed to release lease');
    }
  }

  /** Resolves the attempt's result, or false once `ms` passed (a paused apiserver must not outlive the deadline). */
  #withDeadline<T>(attempt: Promise<T>, ms: number): Promise<T | false> {
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => resolve(false), ms);
      attempt.then(
        (value) => {
          this.#clock.clearTimeout(timer);
          resolve(value);
        },
        () => {
          this.#clock.clearTimeout(timer);
          resolve(false);
        },
      );
    });
  }

  #setLeading(leading: boolean): void {
    this.#leading = leading;
    if (!leading) this.#writableUntil = Number.NEGATIVE_INFINITY;
    this.#opts.metrics?.leaderStatus.set({ name: this.#opts.name }, leading ? 1 : 0);
  }
}

function sameRecord(a: LeaseSpec, b: LeaseSpec): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.renewTime === b.renewTime &&
    a.acquireTime === b.acquireTime &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.leaseTransitions === b.leaseTransitions
  );
}
