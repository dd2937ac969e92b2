// Retention's next action, from what is observed: pure, and safe to resume after a crash at any point. The dump files
// go first (a Job), the SampleDBBackup objects after, so no object is removed while its dump is left behind; a
// repeat finds files already gone (rm -f) or objects already deleted.
import type { SampleDbBackupObject } from '../../api/index.ts';
import type { JobState } from '../job-state.ts';
import { DUMP_PATH_PATTERN } from '../scripts/prune.ts';
import { parseBackupLocation } from '../steps/init-job.ts';

export interface PruneInput {
  dbName: string;
  /** The backup volume the SampleDB writes to now. */
  claimName: string;
  /** What decideRetention chose to remove. */
  prune: readonly string[];
  /** The SampleDBBackups in the namespace. */
  backups: readonly SampleDbBackupObject[];
  /** The prune Job for exactly these backups, if one exists. */
  job: JobState | undefined;
}

export type PruneAction =
  | { kind: 'none' }
  /** A backup of this SampleDB is not finished: it may be writing to the volume. */
  | { kind: 'wait-backup'; name: string }
  | { kind: 'run-job'; names: string[]; paths: string[] }
  | { kind: 'wait-job'; names: string[] }
  | { kind: 'delete-objects'; names: string[] }
  | { kind: 'job-failed'; names: string[] };

const finished = (b: SampleDbBackupObject) => b.status?.phase === 'Completed' || b.status?.phase === 'Failed';

/**
 * Only backups whose dump is on the SampleDB's backup volume at a path the operator wrote are removed: a backup
 * whose file lives elsewhere (another claim) would lose its object and leave its file, so it is kept.
 */
export function pruneTargets(input: PruneInput): { names: string[]; paths: string[] } {
  const byName = new Map(input.backups.map((b) => [b.metadata.name, b]));
  const names: string[] = [];
  const paths: string[] = [];
  for (const name of input.prune) {
    const location = parseBackupLocation(byName.get(name)?.status?.location);
    if (!location || location.claimName !== input.claimName || !DUMP_PATH_PATTERN.test(location.path))
      continue;
    names.push(name);
    paths.push(location.path);
  }
  return { names, paths };
}

export function planPrune(input: PruneInput): PruneAction {
  const targets = pruneTargets(input);
  if (targets.names.length === 0) return { kind: 'none' };
  const busy = input.backups.find(
    (b) => b.spec?.sampleDB?.name === input.dbName && !b.metadata.deletionTimestamp && !finished(b),
  );
  if (busy?.metadata.name) return { kind: 'wait-backup', name: busy.metadata.name };
  switch (input.job) {
    case undefined:
      return { kind: 'run-job', ...targets };
    case 'running':
      return { kind: 'wait-job', names: targets.names };
    case 'succeeded':
      return { kind: 'delete-objects', names: targets.names };
    case 'failed':
      return { kind: 'job-failed', names: targets.names };
  }
}
