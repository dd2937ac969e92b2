/**
 * Exponential backoff with jitter for reconnect loops. Jitter spreads a fleet of clients that all lost the same
 * apiserver so they do not come back in lockstep.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor: number;
  /** Fraction in [0, 1]: the delay is drawn uniformly from [d * (1 - jitter), d]. */
  jitter: number;
}

export const defaultBackoff: BackoffOptions = { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 0.5 };

/**
 * The delay after `failures` earlier failures, before jitter: initialMs · factor^failures, capped at maxMs. The one
 * exponential schedule of the runtime (reconnects here, per-key requeues in the work queue) and of its users.
 */
export function exponentialDelay(
  failures: number,
  { initialMs, maxMs, factor }: Pick<BackoffOptions, 'initialMs' | 'maxMs' | 'factor'>,
): number {
  return Math.min(maxMs, initialMs * factor ** Math.max(0, failures));
}

export class Backoff {
  readonly #opts: BackoffOptions;
  readonly #random: () => number;
  #attempt = 0;

  constructor(opts: Partial<BackoffOptions> = {}, random: () => number = Math.random) {
    this.#opts = { ...defaultBackoff, ...opts };
    this.#random = random;
  }

  get attempt(): number {
    return this.#attempt;
  }

  /** The next delay; each call counts as one more failure. */
  next(): number {
    const ceiling = exponentialDelay(this.#attempt, this.#opts);
    this.#attempt++;
    return ceiling * (1 - this.#opts.jitter * this.#random());
  }

  reset(): void {
    this.#attempt = 0;
  }
}
