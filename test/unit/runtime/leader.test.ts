import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { ApiError } from '../../../src/runtime/http.ts';
import {
  LeaderElector,
  type LeaseApi,
  type LeaseSpec,
  type LeaseState,
} from '../../../src/runtime/leader.ts';
import { runtimeMetrics } from '../../../src/runtime/metrics.ts';
import { FakeClock, settle } from './fake-clock.ts';

/** In-memory Lease with resourceVersion conflicts, standing in for the apiserver. */
class FakeLeaseApi implements LeaseApi {
  lease: LeaseState | undefined;
  failing = false;
  writes = 0;
  #rv = 0;

  async get(): Promise<LeaseState | undefined> {
    if (this.failing) throw new Error('apiserver unreachable');
    return this.lease && structuredClone(this.lease);
  }

  async create(spec: LeaseSpec): Promise<LeaseState> {
    if (this.failing) throw new Error('apiserver unreachable');
    if (this.lease) throw new ApiError(409, 'POST', 'lease', { reason: 'AlreadyExists' });
    return this.#write(spec);
  }

  async update(spec: LeaseSpec, resourceVersion: string): Promise<LeaseState> {
    if (this.failing) throw new Error('apiserver unreachable');
    if (this.lease?.resourceVersion !== resourceVersion)
      throw new ApiError(409, 'PUT', 'lease', { reason: 'Conflict' });
    return this.#write(spec);
  }

  #write(spec: LeaseSpec): LeaseState {
    this.writes++;
    this.lease = { spec: structuredClone(spec), resourceVersion: String(++this.#rv) };
    return structuredClone(this.lease);
  }
}

function candidate(identity: string, api: FakeLeaseApi, clock: FakeClock, registry?: Registry) {
  const log: string[] = [];
  const elector = new LeaderElector({
    identity,
    api,
    clock,
    name: 'test-lease',
    random: () => 0,
    metrics: registry ? runtimeMetrics(registry) : undefined,
    onStartedLeading: () => {
      log.push('started');
    },
    onStoppedLeading: () => {
      log.push(`stopped(holder=${api.lease?.spec.holderIdentity})`);
    },
  });
  const stop = new AbortController();
  const done = elector.run(stop.signal);
  return { elector, log, stop, done };
}

/** `a` leads, then `b` joins as a standby. */
async function leaderAndStandby() {
  const clock = new FakeClock();
  const api = new FakeLeaseApi();
  const a = candidate('a', api, clock);
  await settle();
  const b = candidate('b', api, clock);
  await settle();
  return { clock, api, a, b };
}

describe('LeaderElector (fake lease API, fake clock)', () => {
  it('creates the lease and leads when there is none; reports it in leader_election_master_status', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const registry = new Registry();
    const a = candidate('a', api, clock, registry);
    await settle();
    assert.equal(a.elector.isLeader, true);
    assert.deepEqual(a.log, ['started']);
    assert.equal(api.lease?.spec.holderIdentity, 'a');
    assert.equal(api.lease?.spec.leaseDurationSeconds, 15);
    assert.match(await registry.metrics(), /leader_election_master_status\{name="test-lease"\} 1/);
    a.stop.abort();
    await a.done;
    assert.match(await registry.metrics(), /leader_election_master_status\{name="test-lease"\} 0/);
  });

  it('renews every retry period while leading', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const a = candidate('a', api, clock);
    await settle();
    const first = api.lease?.spec.renewTime;
    await clock.advance(2_000);
    assert.notEqual(api.lease?.spec.renewTime, first);
    assert.equal(api.writes, 2);
    await clock.advance(20_000);
    assert.equal(api.writes, 12);
    assert.equal(a.elector.isLeader, true);
    a.stop.abort();
    await a.done;
  });

  it('lets exactly one of two candidates lead', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const a = candidate('a', api, clock);
    const b = candidate('b', api, clock);
    await clock.advance(30_000);
    assert.equal([a, b].filter((c) => c.elector.isLeader).length, 1);
    for (const c of [a, b]) c.stop.abort();
    await Promise.all([a.done, b.done]);
  });

  it('takes over an abandoned lease once its duration passed on our own clock, not before', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    // A leader that vanished without releasing (SIGKILL): its record stays, never renewed again.
    await api.create({
      holderIdentity: 'dead',
      leaseDurationSeconds: 15,
      renewTime: 'x',
      leaseTransitions: 3,
    });
    const b = candidate('b', api, clock);
    await clock.advance(14_900);
    assert.equal(b.elector.isLeader, false);
    await clock.advance(200);
    assert.equal(b.elector.isLeader, true, 'acquired right at expiry, not a retry period later');
    assert.equal(api.lease?.spec.holderIdentity, 'b');
    assert.equal(api.lease?.spec.leaseTransitions, 4);
    b.stop.abort();
    await b.done;
  });

  it('on failing renewals stops leading after the renew deadline, without exiting, and campaigns again', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const a = candidate('a', api, clock);
    await settle();
    api.failing = true;
    await clock.advance(8_000);
    assert.equal(a.elector.isLeader, true, 'still inside the 10 s renew deadline');
    await clock.advance(4_000);
    assert.equal(a.elector.isLeader, false);
    assert.deepEqual(a.log, ['started', 'stopped(holder=a)']);
    api.failing = false;
    await clock.advance(3_000);
    assert.equal(a.elector.isLeader, true, 'campaigned again and re-acquired its own lease');
    assert.deepEqual(a.log, ['started', 'stopped(holder=a)', 'started']);
    a.stop.abort();
    await a.done;
  });

  it('stops leading when another candidate holds the lease', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const a = candidate('a', api, clock);
    await settle();
    const current = api.lease!;
    await api.update({ ...current.spec, holderIdentity: 'usurper' }, current.resourceVersion);
    await clock.advance(2_100);
    assert.equal(a.elector.isLeader, false);
    a.stop.abort();
    await a.done;
  });

  it('on shutdown stops work first, then releases the lease so a standby takes over without waiting', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const a = candidate('a', api, clock);
    await settle();
    const b = candidate('b', api, clock);
    await clock.advance(4_000);
    assert.equal(b.elector.isLeader, false);
    a.stop.abort();
    await a.done;
    assert.deepEqual(a.log, ['started', 'stopped(holder=a)'], 'work stopped while the lease was still ours');
    assert.equal(api.lease?.spec.holderIdentity, '');
    assert.equal(api.lease?.spec.leaseDurationSeconds, 1);
    b.elector.poke();
    await settle();
    assert.equal(b.elector.isLeader, true, 'a poke (lease watch) makes the takeover immediate');
    b.stop.abort();
    await b.done;
  });

  it('a standby without pokes still takes a released lease within one retry period', async () => {
    const { clock, a, b } = await leaderAndStandby();
    a.stop.abort();
    await a.done;
    await clock.advance(2_000);
    assert.equal(b.elector.isLeader, true);
    b.stop.abort();
    await b.done;
  });

  it('write fence: open while leading, closed for a standby and from the renew deadline after the last renewal began', async () => {
    const { clock, a, b } = await leaderAndStandby();
    assert.equal(a.elector.writeFence(), undefined);
    assert.equal(b.elector.writeFence(), 'not the leader');
    await clock.advance(20_000);
    assert.equal(a.elector.writeFence(), undefined, 'renewals keep it open');
    // Paused right after a renewal (every 2 s, the last one at +20 s): no timer runs, the clock moves on.
    clock.pause(9_999);
    assert.equal(a.elector.writeFence(), undefined);
    clock.pause(1);
    assert.match(
      a.elector.writeFence() ?? '',
      /leadership may have passed: the lease was last renewed 10000 ms ago/,
    );
    assert.equal(a.elector.isLeader, true, 'the fence closes before the renew loop has even run');
    for (const c of [a, b]) c.stop.abort();
    await Promise.all([a.done, b.done]);
  });

  it('write fence: a lost lease closes it before the work is stopped; a shutdown keeps it open for the drain', async () => {
    const clock = new FakeClock();
    const api = new FakeLeaseApi();
    const fenceWhenStopped: Array<string | undefined> = [];
    const make = () =>
      new LeaderElector({
        identity: 'a',
        api,
        clock,
        name: 'test-lease',
        random: () => 0,
        onStartedLeading: () => undefined,
        onStoppedLeading: () => {
          fenceWhenStopped.push(elector.writeFence());
        },
      });
    const elector = make();
    const stop = new AbortController();
    const done = elector.run(stop.signal);
    await settle();
    api.failing = true;
    await clock.advance(12_000);
    assert.equal(elector.isLeader, false);
    assert.deepEqual(fenceWhenStopped, ['not the leader']);
    api.failing = false;
    await clock.advance(3_000);
    assert.equal(elector.isLeader, true, 'campaigns again and leads');
    stop.abort();
    await done;
    assert.equal(fenceWhenStopped[1], undefined, 'draining on shutdown may still write: the lease is ours');
    assert.equal(elector.writeFence(), 'not the leader');
  });
});
