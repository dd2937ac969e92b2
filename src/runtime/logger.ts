import { randomUUID } from 'node:crypto';
import { type Logger, pino } from 'pino';

export type { Logger };

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** Where JSON lines go; stdout by default. Tests pass a stream to capture them. */
  destination?: NodeJS.WritableStream;
}

/** Structured JSON logs; the level name (not pino's number) so log pipelines can filter without a lookup table. */
export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? 'info',
      name: opts.name,
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination ?? process.stdout,
  );
}

export function newReconcileID(): string {
  return randomUUID();
}

/**
 * One child logger per reconcile, so every line of that reconcile carries its id and object (as `object`, because
 * pino reserves `name` for the logger's own name).
 */
export function reconcileLogger(
  base: Logger,
  fields: { controller: string; namespace: string; name: string; reconcileID: string },
): Logger {
  const object = fields.namespace ? `${fields.namespace}/${fields.name}` : fields.name;
  return base.child({ controller: fields.controller, object, reconcileID: fields.reconcileID });
}

/** A logger that drops everything, for components created without one. */
export const silentLogger: Logger = pino({ level: 'silent' });
