import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { Client } from '../../../src/runtime/client.ts';
import { EventSink, type EventWrite } from '../../../src/runtime/event-sink.ts';
import { ApiError, type KubeHttp, WriteFencedError } from '../../../src/runtime/http.ts';
import { createLogger } from '../../../src/runtime/logger.ts';
import { runtimeMetrics } from '../../../src/runtime/metrics.ts';
import type { KubeObject } from '../../../src/runtime/resource.ts';
import { FakeClock, settle } from './fake-clock.ts';

// The sink is driven by writes the test controls (deferred promises): nothing here sleeps, a write ends when the
// test resolves it, and flush timeouts run on a fake clock.

/** A write whose start the test sees and whose end it decides. */
class ControlledWrite {
  started = false;
  done = false;
  readonly #deferred = Promise.withResolvers<void>();

  readonly key: string;
  readonly tracker: { inFlight: number; maxInFlight: number } | undefined;

  constructor(key: string, tracker?: { inFlight: number; maxInFlight: number }) {
    this.key = key;
    this.tracker = tracker;
  }

  item(): EventWrite {
    return {
      key: this.key,
      regarding: `ConfigMap ns/${this.key}`,
      reason: 'Tested',
      write: async () => {
        this.started = true;
        this.#track(1);
        try {
          await this.#deferred.promise;
        } finally {
          this.done = true;
          this.#track(-1);
        }
      },
    };
  }

  finish(): void {
    this.#deferred.resolve();
  }

  fail(err: unknown): void {
    this.#deferred.reject(err);
  }

  #track(delta: number): void {
    if (!this.tracker) return;
    this.tracker.inFlight += delta;
    this.tracker.maxInFlight = Math.max(this.tracker.maxInFlight, this.tracker.inFlight);
  }
}

/** A promise's state after pending callbacks ran, without waiting for it. */
async function stateOf(promise: Promise<unknown>): Promise<'pending' | 'settled'> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await settle();
  return settled ? 'settled' : 'pending';
}

function capturedLogger(): {
  logger: ReturnType<typeof createLogger>;
  lines: () => Record<string, unknown>[];
} {
  const raw: string[] = [];
  const destination = { write: (line: string) => raw.push(line) } as unknown as NodeJS.WritableStream;
  const logger = createLogger({ level: 'debug', destination });
  return { logger, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('EventSink', () => {
  it('returns from enqueue before the write completes, the write already started', async () => {
    const sink = new EventSink();
    const write = new ControlledWrite('a');
    assert.equal(sink.enqueue(write.item()), true);
    assert.equal(write.started, true, 'a free writer starts it at once');
    await settle();
    assert.equal(write.done, false);
    assert.equal(sink.pending, 1);
    write.finish();
    assert.equal(await sink.flush(1000), true);
    assert.equal(write.done, true);
    assert.equal(sink.pending, 0);
  });

  it('runs no more writes at once than its writers', async () => {
    const tracker = { inFlight: 0, maxInFlight: 0 };
    const sink = new EventSink({ concurrency: 2 });
    const writes = ['a', 'b', 'c', 'd', 'e'].map((k) => new ControlledWrite(k, tracker));
    for (const w of writes) sink.enqueue(w.item());
    await settle();
    assert.deepEqual(
      writes.map((w) => w.started),
      [true, true, false, false, false],
    );
    writes[0]!.finish();
    await settle();
    assert.equal(writes[2]!.started, true, 'a finished write frees its writer for the next');
    assert.equal(writes[3]!.started, false);
    for (const w of writes) w.finish();
    assert.equal(await sink.flush(1000), true);
    assert.ok(writes.every((w) => w.done));
    assert.equal(tracker.maxInFlight, 2);
  });

  it('drops a write when the queue is full and counts it, in the runtime_events_dropped_total metric too', async () => {
    const registry = new Registry();
    const metrics = runtimeMetrics(registry);
    const sink = new EventSink({ capacity: 2, concurrency: 1, dropped: metrics.eventsDropped });
    const writes = ['a', 'b', 'c', 'd', 'e'].map((k) => new ControlledWrite(k));
    const queued = writes.map((w) => sink.enqueue(w.item()));
    // 'a' is in flight (not counted against the capacity), 'b' and 'c' wait, 'd' and 'e' find the queue full.
    assert.deepEqual(queued, [true, true, true, false, false]);
    assert.equal(sink.dropped, 2);
    const metric = await registry.getSingleMetric('runtime_events_dropped_total')?.get();
    assert.equal(metric?.values[0]?.value, 2);
    for (const w of writes) w.finish();
    assert.equal(await sink.flush(1000), true);
    assert.equal(writes[3]!.started, false, 'a dropped write never runs');
    assert.equal(sink.enqueue(new ControlledWrite('f').item()), true, 'room again once drained');
  });

  it('flushes once the in-flight writes finish, and gives up at its timeout', async () => {
    const clock = new FakeClock();
    const sink = new EventSink({ clock });
    assert.equal(await sink.flush(0), true, 'nothing queued: at once');

    const slow = new ControlledWrite('slow');
    sink.enqueue(slow.item());
    const waiting = sink.flush(5000);
    assert.equal(await stateOf(waiting), 'pending', 'waits for the write in flight');
    slow.finish();
    assert.equal(await waiting, true);
    assert.equal(clock.pendingTimers, 0, 'its timer is cleared once drained');

    const stuck = new ControlledWrite('stuck');
    sink.enqueue(stuck.item());
    const timingOut = sink.flush(5000);
    await clock.advance(4999);
    assert.equal(await stateOf(timingOut), 'pending');
    await clock.advance(1);
    assert.equal(await timingOut, false, 'the timeout passed with a write still in flight');
    assert.equal(sink.pending, 1, 'the write goes on in the background');
    stuck.finish();
    assert.equal(await sink.flush(5000), true);
  });

  it('logs a failed write without its message, does not retry it, and goes on with the next', async () => {
    const { logger, lines } = capturedLogger();
    const sink = new EventSink({ concurrency: 1, logger });
    const failing = new ControlledWrite('a');
    const fenced = new ControlledWrite('b');
    const next = new ControlledWrite('c');
    let attempts = 0;
    const counted = failing.item();
    sink.enqueue({
      ...counted,
      write: () => {
        attempts++;
        return counted.write();
      },
    });
    sink.enqueue(fenced.item());
    sink.enqueue(next.item());
    failing.fail(
      new ApiError(422, 'POST', '/events', { reason: 'Invalid', message: 'note: "s3cr3t" invalid' }),
    );
    await settle();
    fenced.fail(new WriteFencedError('POST', '/events', 'not the leader'));
    await settle();
    assert.equal(next.started, true, 'the failures did not stop the writer');
    next.finish();
    assert.equal(await sink.flush(1000), true);
    assert.equal(attempts, 1, 'not retried');

    const [warn, debug] = lines();
    assert.equal(warn?.level, 'warn');
    assert.equal(warn?.regarding, 'ConfigMap ns/a');
    assert.equal(warn?.reason, 'Tested');
    assert.equal(warn?.status, 422);
    assert.equal(warn?.statusReason, 'Invalid');
    assert.ok(!JSON.stringify(lines()).includes('s3cr3t'), "the apiserver's message is not logged");
    assert.equal(debug?.level, 'debug', 'a fenced write (not the leader) is expected: not a warning');
    assert.equal(lines().length, 2);
  });

  it('runs writes of one key one at a time, in order, while other keys go ahead', async () => {
    const sink = new EventSink({ concurrency: 4 });
    const first = new ControlledWrite('same');
    const second = new ControlledWrite('same');
    const other = new ControlledWrite('other');
    sink.enqueue(first.item());
    sink.enqueue(second.item());
    sink.enqueue(other.item());
    await settle();
    assert.equal(first.started, true);
    assert.equal(second.started, false, 'waits for the write of its key in flight');
    assert.equal(other.started, true, 'a free writer takes the next key');
    first.finish();
    await settle();
    assert.equal(second.started, true);
    second.finish();
    other.finish();
    assert.equal(await sink.flush(1000), true);
  });
});

// Client.event over a transport whose Event writes the test completes.
type Call = {
  verb: 'create' | 'patch';
  body: Record<string, unknown>;
  name: string;
  answer: PromiseWithResolvers<unknown>;
};

function controlledHttp(): { http: KubeHttp; calls: Call[] } {
  const calls: Call[] = [];
  const record = (verb: Call['verb'], name: string, body: unknown) => {
    const answer = Promise.withResolvers<unknown>();
    calls.push({ verb, name, body: body as Record<string, unknown>, answer });
    return answer.promise;
  };
  const http = {
    create: (_rt: unknown, obj: KubeObject) => record('create', obj.metadata.name ?? '', obj),
    patch: (_rt: unknown, ref: { name: string }, patch: unknown) => record('patch', ref.name, patch),
  };
  return { http: http as unknown as KubeHttp, calls };
}

const regarding: KubeObject = {
  apiVersion: 'example.com/v1',
  kind: 'SampleDB',
  metadata: { name: 'db', namespace: 'ns', uid: 'u1', resourceVersion: '1' },
};
const created = {
  regarding,
  type: 'Normal' as const,
  reason: 'Created',
  action: 'Create',
  note: 'Created x',
};
const seriesOf = (call: Call | undefined) =>
  (call?.body as { series?: { count: number } } | undefined)?.series?.count;

describe('Client.event through the sink', () => {
  it('resolves before the Event is written, and flushEvents waits for it', async () => {
    const { http, calls } = controlledHttp();
    const client = new Client({ http, fieldManager: 'example-operator' });
    await client.event(created);
    assert.equal(calls.length, 1, 'the create is on its way');
    assert.equal(client.pendingEvents, 1, 'and not answered yet');
    const flushed = client.flushEvents(1000);
    assert.equal(await stateOf(flushed), 'pending');
    calls[0]!.answer.resolve({});
    assert.equal(await flushed, true);
  });

  it('folds repeats made while the create is in flight into one series patch after it', async () => {
    const { http, calls } = controlledHttp();
    const client = new Client({ http, fieldManager: 'example-operator' });
    await client.event(created);
    await client.event(created);
    await client.event(created);
    await settle();
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['create'],
      'no patch before the create it patches is answered',
    );
    calls[0]!.answer.resolve({});
    await settle();
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['create', 'patch'],
    );
    assert.equal(calls[1]!.name, calls[0]!.name, 'the patch is of the Event created');
    assert.equal(seriesOf(calls[1]), 3, 'one patch carries both repeats');

    // A repeat while that patch is in flight is one more patch, after it.
    await client.event(created);
    await settle();
    assert.equal(calls.length, 2);
    calls[1]!.answer.resolve({});
    await settle();
    assert.equal(seriesOf(calls[2]), 4);
    calls[2]!.answer.resolve({});
    assert.equal(await client.flushEvents(1000), true);
    assert.equal(calls.filter((c) => c.verb === 'create').length, 1, 'one Event');
  });

  it('creates a fresh Event when the series patch finds it gone', async () => {
    const { http, calls } = controlledHttp();
    const client = new Client({ http, fieldManager: 'example-operator' });
    await client.event(created);
    calls[0]!.answer.resolve({});
    await client.flushEvents(1000);
    await client.event(created);
    await settle();
    calls[1]!.answer.reject(new ApiError(404, 'PATCH', '/events', { reason: 'NotFound' }));
    await settle();
    assert.equal(calls[2]?.verb, 'create');
    assert.notEqual(calls[2]?.name, calls[0]?.name);
    calls[2]!.answer.resolve({});
    assert.equal(await client.flushEvents(1000), true);
  });

  it('never rejects for a failed write, and a dropped first Event is created by its repeat', async () => {
    const { http, calls } = controlledHttp();
    const client = new Client({
      http,
      fieldManager: 'example-operator',
      events: { capacity: 0, concurrency: 1 },
    });
    // Capacity 0: only a write a free writer takes at once gets in.
    await client.event({ ...created, note: 'busy' });
    await client.event(created);
    assert.equal(client.droppedEvents, 1);
    calls[0]!.answer.reject(new ApiError(500, 'POST', '/events', {}));
    assert.equal(await client.flushEvents(1000), true);
    await client.event(created);
    assert.equal(calls[1]?.verb, 'create', 'the dropped Event never existed: its repeat creates it');
    calls[1]!.answer.resolve({});
    assert.equal(await client.flushEvents(1000), true);
  });
});
