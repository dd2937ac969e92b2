// The prune Job's script: removes the dump files (and their .sha256) of the backups retention removes, before the
// operator deletes their SampleDBBackup objects. Only paths the operator itself wrote (<sampledb>/<backup>.dump,
// DNS names both) are accepted; anything else fails the Job instead of touching the volume.
import { COMMON_FUNCTIONS } from './common.ts';

/** A dump path relative to the backup volume's root, as backupDumpPath writes it. */
export const DUMP_PATH_PATTERN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?\.dump$/;

export interface PruneScriptSettings {
  /** Where the backup volume is mounted. */
  root: string;
  /** Dump paths relative to `root`. */
  paths: readonly string[];
  terminationLog?: string;
}

export function pruneScriptEnv(settings: PruneScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-prune',
    HOME: '/tmp',
    SAMPLEDB_BACKUP_ROOT: settings.root,
    SAMPLEDB_PRUNE_PATHS: settings.paths.join(' '),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

export const PRUNE_SCRIPT = `${COMMON_FUNCTIONS}

for path in $SAMPLEDB_PRUNE_PATHS; do
  case "$path" in
    /* | *..* | */*/* | *[!a-z0-9./-]*) fail "refusing to remove $path: not a dump path the operator wrote" ;;
    */*.dump) ;;
    *) fail "refusing to remove $path: not a dump path the operator wrote" ;;
  esac
  rm -f "$SAMPLEDB_BACKUP_ROOT/$path" "$SAMPLEDB_BACKUP_ROOT/$path.sha256"
  log "removed $path"
done
`;
