import { setTimeout as sleep } from 'node:timers/promises';

export interface PollOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Returns a reason to give up early (e.g. the process being waited on exited). */
  readonly failFast?: () => string | undefined;
}

/** Polls until check() returns a value other than undefined; throws on deadline or failFast. */
export async function pollUntil<T>(
  what: string,
  check: () => Promise<T | undefined>,
  options: PollOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    const reason = options.failFast?.();
    if (reason) throw new Error(`${what}: ${reason}`);
    try {
      const value = await check();
      if (value !== undefined) return value;
      // A later clean "not yet" supersedes an earlier error, so a timeout does not blame a stale one.
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`${what}: not ready after ${options.timeoutMs} ms${detail}`);
    }
    await sleep(options.intervalMs ?? 50);
  }
}
