// One backup of a SampleDB at a time: scheduled, on-demand and final backups queue in the order they were created.
// Pure, and decided from the cache alone without a lock: of the unfinished backups of a SampleDB, only the first in
// (creationTimestamp, name) order may start, and a backup created later can never come before it, so two workers
// reconciling two backups of one SampleDB cannot both start.
import type { SampleDbBackupObject } from '../../api/index.ts';

const finished = (b: SampleDbBackupObject) => b.status?.phase === 'Completed' || b.status?.phase === 'Failed';

const order = (a: SampleDbBackupObject, b: SampleDbBackupObject) =>
  String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')) ||
  String(a.metadata.name ?? '').localeCompare(String(b.metadata.name ?? ''));

/** The unfinished backup of the same SampleDB that goes before `backup`, if one does. */
export function backupAhead(
  backup: SampleDbBackupObject,
  backups: readonly SampleDbBackupObject[],
): string | undefined {
  const of = backup.spec.sampleDB.name;
  const ahead = backups
    .filter(
      (b) =>
        b.spec?.sampleDB?.name === of &&
        b.metadata.name !== backup.metadata.name &&
        !b.metadata.deletionTimestamp &&
        !finished(b) &&
        order(b, backup) < 0,
    )
    .sort(order);
  return ahead[0]?.metadata.name;
}
