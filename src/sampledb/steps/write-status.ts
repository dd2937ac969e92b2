// The last step, run whatever the others did: status.ts turns the observations into phase and conditions, the
// steps' own conditions are merged in, and the status subresource is written only when something changed.
import { isDeepStrictEqual } from 'node:util';
import {
  API_VERSION,
  KINDS,
  type SampleDbBackupObject,
  type SampleDbObject,
  type SampleDbStatus,
} from '../../api/index.ts';
import { type Condition, mergeConditions } from '../../runtime/index.ts';
import { SAMPLEDB_BACKUPS, SAMPLEDBS } from '../resources.ts';
import { sampleDbStatus } from '../status.ts';
import type { StepContext } from './context.ts';

/** Pure: the most recent Completed backup of `dbName` among `backups`. */
export function lastCompletedBackup(
  dbName: string,
  backups: readonly SampleDbBackupObject[],
): SampleDbStatus['lastBackup'] | undefined {
  const done = backups
    .filter(
      (b) => b.spec?.sampleDB?.name === dbName && b.status?.phase === 'Completed' && b.status.completedAt,
    )
    .sort((a, b) => String(a.status?.completedAt).localeCompare(String(b.status?.completedAt)));
  const last = done.at(-1);
  if (!last?.metadata.name) return undefined;
  return {
    name: last.metadata.name,
    ...(last.status?.completedAt ? { completionTime: last.status.completedAt } : {}),
  };
}

export function computeStatus(ctx: StepContext): SampleDbStatus {
  const now = ctx.now();
  const base = sampleDbStatus({ ...ctx.instance, object: ctx.db }, ctx.observed, now);
  const conditions = mergeConditions(
    base.conditions as Condition[],
    [...ctx.conditions, ...ctx.overrides],
    now,
  );
  const backups = ctx.view.list<SampleDbBackupObject>(SAMPLEDB_BACKUPS, ctx.instance.namespace);
  const lastBackup = lastCompletedBackup(ctx.instance.name, backups) ?? ctx.db.status?.lastBackup;
  return { ...base, conditions, ...(lastBackup ? { lastBackup } : {}) };
}

export async function writeStatus(ctx: StepContext): Promise<void> {
  const status = computeStatus(ctx);
  if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), ctx.db.status ?? {})) return;
  ctx.db = await ctx.client.applyStatus<SampleDbObject>(SAMPLEDBS, {
    apiVersion: API_VERSION,
    kind: KINDS.sampleDb,
    metadata: { name: ctx.db.metadata.name, namespace: ctx.db.metadata.namespace },
    status,
  } as never);
}
