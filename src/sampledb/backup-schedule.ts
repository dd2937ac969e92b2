// Scheduled backups and retention, decided from the SampleDB, its SampleDBBackups and the clock alone: pure, so a
// restarted operator (or two reconciles of the same minute) reach the same decision. croner only computes run times
// here; it never starts a timer (no callback, paused), the reconciler's requeue is the timer.
import { Cron } from 'croner';
import {
  ANNOTATIONS,
  API_VERSION,
  KINDS,
  LABELS,
  type SampleDbBackupObject,
  type SampleDbObject,
  TRIGGER_SCHEDULE,
} from '../api/index.ts';
import { metaTime } from '../runtime/index.ts';
import type { SampleDbInstance } from './instance.ts';

/** Requeue at least this often while a schedule is active, so a clock jump or a missed event heals. */
export const MAX_SCHEDULE_REQUEUE_MS = 60 * 60_000;
const MIN_SCHEDULE_REQUEUE_MS = 1_000;

export interface ScheduleInput {
  db: SampleDbObject;
  /** Whether the database serves (Ready) right now; nothing is scheduled otherwise. */
  ready: boolean;
  /** SampleDBBackups in the SampleDB's namespace (any SampleDB; filtered here). */
  backups: readonly SampleDbBackupObject[];
  now: Date;
}

export type ScheduleDecision =
  | { kind: 'unscheduled'; reason: 'NoSchedule' | 'Suspended' | 'Deleting' | 'NotReady' }
  | { kind: 'invalid'; message: string }
  | {
      kind: 'scheduled';
      /** The backup to create now, for the latest slot not yet taken (missed slots before it are skipped). */
      due?: { name: string; at: Date };
      next?: Date;
      requeueAfterMs: number;
    };

/** `<db>-<yyyyMMddHHmm>` of the slot in UTC: the same slot always gives the same name, so it is created once. */
export function scheduledBackupName(dbName: string, slot: Date): string {
  const stamp = slot.toISOString().slice(0, 16).replace(/[-T:]/g, '');
  return `${dbName}-${stamp}`;
}

/** A croner job that only computes times (five-field cron or a macro, in the schedule's zone, default UTC). */
export function cronFor(schedule: string, timezone: string | undefined): Cron {
  return new Cron(schedule, { paused: true, mode: '5-part', timezone: timezone ?? 'UTC' });
}

/** The newest slot any existing scheduled backup of this SampleDB was created for. */
function lastScheduledSlot(db: SampleDbObject, backups: readonly SampleDbBackupObject[]): number | undefined {
  let last: number | undefined;
  for (const b of backups) {
    if (b.spec?.sampleDB?.name !== db.metadata.name) continue;
    if (b.metadata.labels?.[LABELS.trigger] !== TRIGGER_SCHEDULE) continue;
    const at = Date.parse(b.metadata.annotations?.[ANNOTATIONS.scheduledAt] ?? '');
    if (Number.isFinite(at) && (last === undefined || at > last)) last = at;
  }
  return last;
}

export function decideSchedule(input: ScheduleInput): ScheduleDecision {
  const { db, now, backups } = input;
  const backup = db.spec.backup;
  if (!backup?.schedule) return { kind: 'unscheduled', reason: 'NoSchedule' };
  if (db.metadata.deletionTimestamp) return { kind: 'unscheduled', reason: 'Deleting' };
  if (backup.suspend) return { kind: 'unscheduled', reason: 'Suspended' };
  if (!input.ready) return { kind: 'unscheduled', reason: 'NotReady' };
  let cron: Cron;
  let latest: Date | undefined;
  let next: Date | undefined;
  try {
    cron = cronFor(backup.schedule, backup.timezone);
    // previousRuns is exclusive of the reference but includes a run earlier in the same second: +1 ms makes a
    // slot exactly at `now` count as reached.
    latest = cron.previousRuns(1, new Date(now.getTime() + 1))[0];
    next = cron.nextRun(now) ?? undefined;
  } catch (err) {
    return { kind: 'invalid', message: err instanceof Error ? err.message : String(err) };
  }
  const untilNext = next ? next.getTime() - now.getTime() : MAX_SCHEDULE_REQUEUE_MS;
  const requeueAfterMs = Math.max(MIN_SCHEDULE_REQUEUE_MS, Math.min(MAX_SCHEDULE_REQUEUE_MS, untilNext));
  const created = Date.parse(db.metadata.creationTimestamp ?? '');
  const taken = lastScheduledSlot(db, backups);
  const isDue =
    latest !== undefined &&
    // Slots before the SampleDB existed are not missed backups (this also keeps a re-created SampleDB of the same
    // name from inheriting the old one's slots).
    (!Number.isFinite(created) || latest.getTime() >= created) &&
    (taken === undefined || latest.getTime() > taken);
  return {
    kind: 'scheduled',
    ...(isDue && latest
      ? { due: { name: scheduledBackupName(db.metadata.name ?? '', latest), at: latest } }
      : {}),
    ...(next ? { next } : {}),
    requeueAfterMs,
  };
}

/** The SampleDBBackup for a slot. Not owned by the SampleDB: like the final backup, it must outlive it. */
export function scheduledBackup(instance: SampleDbInstance, name: string, slot: Date): SampleDbBackupObject {
  return {
    apiVersion: API_VERSION,
    kind: KINDS.sampleDbBackup,
    metadata: {
      name,
      namespace: instance.namespace,
      labels: {
        ...instance.labels.backup,
        [LABELS.trigger]: TRIGGER_SCHEDULE,
        ...(instance.object.metadata.uid ? { [LABELS.sampleDbUid]: instance.object.metadata.uid } : {}),
      },
      annotations: { [ANNOTATIONS.scheduledAt]: metaTime(slot) },
    },
    spec: { sampleDB: { name: instance.name }, method: 'pg_dump' },
  };
}

// ---- retention ----

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** "30d" / "12h" / "15m" in milliseconds; undefined when it is not such a duration. */
export function parseRetentionAge(value: string): number | undefined {
  const match = /^([0-9]+)(d|h|m)$/.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

export interface RetentionInput {
  db: SampleDbObject;
  /** Every SampleDBBackup in the namespace. */
  backups: readonly SampleDbBackupObject[];
  /** Every SampleDB in the namespace: a backup one of them restores from is never pruned. */
  sampleDbs: readonly SampleDbObject[];
  now: Date;
}

export interface RetentionDecision {
  /** Backups to delete, oldest first. */
  prune: string[];
  /** The newest Completed backup, always kept. */
  newest?: string;
}

const time = (value: string | undefined) => {
  const t = Date.parse(value ?? '');
  return Number.isFinite(t) ? t : undefined;
};

/**
 * Which backups of this SampleDB retention removes. Candidates are its Completed backups, scheduled or on demand,
 * except final deletion backups and backups referenced by any `bootstrap.fromBackup`. Of those, the newest is always
 * kept; the others go when they are beyond `count` newest or completed longer than `maxAge` ago. Failed backups are
 * pruned only when retention is set and a Completed backup was created after them (so the last Failed one, the
 * evidence of a current problem, stays). A backup whose times cannot be read is kept.
 */
export function decideRetention(input: RetentionInput): RetentionDecision {
  const { db, now } = input;
  const retention = db.spec.backup?.retention;
  if (!retention || (retention.count === undefined && retention.maxAge === undefined)) return { prune: [] };
  const maxAgeMs = retention.maxAge === undefined ? undefined : parseRetentionAge(retention.maxAge);
  // A maxAge that does not parse must not turn into "delete everything" or "delete nothing silently": keep all.
  if (retention.maxAge !== undefined && maxAgeMs === undefined) return { prune: [] };

  const referenced = new Set(
    input.sampleDbs
      .map((d) => d.spec.bootstrap?.fromBackup?.name)
      .filter((n): n is string => n !== undefined),
  );
  const mine = input.backups.filter(
    (b) =>
      b.spec?.sampleDB?.name === db.metadata.name &&
      b.metadata.name !== undefined &&
      !b.metadata.deletionTimestamp &&
      b.metadata.labels?.[LABELS.finalForUid] === undefined &&
      // A scheduled backup of an earlier SampleDB of this name is not this one's to prune.
      (b.metadata.labels?.[LABELS.sampleDbUid] ?? db.metadata.uid) === db.metadata.uid,
  );
  const completed = mine
    .filter((b) => b.status?.phase === 'Completed' && time(b.status.completedAt) !== undefined)
    .sort(
      (a, b) =>
        (time(b.status?.completedAt) ?? 0) - (time(a.status?.completedAt) ?? 0) ||
        String(b.metadata.name).localeCompare(String(a.metadata.name)),
    );
  const newest = completed[0];
  if (!newest) return { prune: [] };

  const prune: { name: string; at: number }[] = [];
  const eligible = completed.filter((b) => !referenced.has(b.metadata.name as string));
  eligible.forEach((b, index) => {
    if (b === newest) return;
    const completedAt = time(b.status?.completedAt) as number;
    const beyondCount = retention.count !== undefined && index >= retention.count;
    const tooOld = maxAgeMs !== undefined && now.getTime() - completedAt > maxAgeMs;
    if (beyondCount || tooOld) prune.push({ name: b.metadata.name as string, at: completedAt });
  });

  const newestCreated = time(newest.metadata.creationTimestamp);
  if (newestCreated !== undefined) {
    for (const b of mine) {
      if (b.status?.phase !== 'Failed' || referenced.has(b.metadata.name as string)) continue;
      const created = time(b.metadata.creationTimestamp);
      if (created !== undefined && created < newestCreated)
        prune.push({ name: b.metadata.name as string, at: created });
    }
  }
  return {
    prune: prune.sort((a, b) => a.at - b.at || a.name.localeCompare(b.name)).map((p) => p.name),
    newest: newest.metadata.name as string,
  };
}
