import type { Clock, TimerHandle } from '../../../src/runtime/clock.ts';

/** Fake clock for unit tests: time moves only through advance(), which fires due timers in order. */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle.id as number);
  }

  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Time jumps by `ms` and no timer fires: what a process stopped (SIGSTOP) and resumed sees as it resumes. */
  pause(ms: number): void {
    this.#now += ms;
  }

  /** Moves time forward by `ms`, firing each due timer at its own time and letting promise chains settle. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      await settle();
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#timers)
        if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.#timers.delete(next[0]);
      this.#now = Math.max(this.#now, next[1].at);
      next[1].fn();
    }
    this.#now = end;
    await settle();
  }
}

/** Lets pending promise callbacks (several hops deep) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
