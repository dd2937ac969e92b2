// The last step, run whatever the others did: status.ts turns the observations into phase and conditions, the
// steps' own conditions are merged in, and the status subresource is written only when something changed; a change
// to Ready or to Failed is also an Event (status-events.ts).
import { isDeepStrictEqual } from 'node:util';
import {
  API_VERSION,
  KINDS,
  type SampleDbBackupObject,
  type SampleDbObject,
  type SampleDbStatus,
} from '../../api/index.ts';
import { type Condition, mergeConditions } from '../../runtime/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import { SAMPLEDB_BACKUPS, SAMPLEDBS } from '../resources.ts';
import { sampleDbStatus } from '../status.ts';
import { statusEvents } from '../status-events.ts';
import type { ClusterView } from '../view.ts';
import type { Writer } from '../writer.ts';
import type { Observation } from './context.ts';
import type { StepsRun } from './run.ts';

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

/** Pure: the status for what the steps observed and the conditions they set. */
export function computeStatus(
  instance: SampleDbInstance,
  run: Pick<StepsRun<Observation>, 'observed' | 'conditions' | 'overrides'>,
  backups: readonly SampleDbBackupObject[],
  now: Date,
): SampleDbStatus {
  const current = { ...instance, object: run.observed.sampleDb ?? instance.object };
  const base = sampleDbStatus(current, run.observed, now);
  const conditions = mergeConditions(
    base.conditions as Condition[],
    [...run.conditions, ...run.overrides],
    now,
  );
  const lastBackup = lastCompletedBackup(instance.name, backups) ?? current.object.status?.lastBackup;
  const replication = run.observed.replication ?? current.object.status?.replication;
  return {
    ...base,
    conditions,
    ...(lastBackup ? { lastBackup } : {}),
    ...(replication ? { replication } : {}),
  };
}

/** Writes the status when it differs from what the SampleDB has; returns the SampleDB as it is now. */
export async function writeStatus(
  instance: SampleDbInstance,
  run: Pick<StepsRun<Observation>, 'observed' | 'conditions' | 'overrides'>,
  view: ClusterView,
  write: Writer,
  now: Date,
): Promise<SampleDbObject> {
  const db = run.observed.sampleDb ?? instance.object;
  const status = computeStatus(instance, run, view.list(SAMPLEDB_BACKUPS, instance.namespace), now);
  if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), db.status ?? {})) return db;
  const written = await write.applyStatus(SAMPLEDBS, {
    apiVersion: API_VERSION,
    kind: KINDS.sampleDb,
    metadata: { name: instance.name, namespace: instance.namespace },
    status,
  });
  // After the status, so an Event never announces what the status does not (yet) say.
  for (const event of statusEvents(db.status, status))
    await write.event({ regarding: written, action: 'Reconcile', ...event });
  return written;
}
