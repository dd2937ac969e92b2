// The backup Job's script: pg_dump in custom format to the backup volume, a sha256 next to it, and a JSON result
// the operator reads from the container's termination message.
import { COMMON_FUNCTIONS } from './common.ts';

export const BACKUP_MOUNT_PATH = '/backups';

export interface BackupScriptSettings {
  host: string;
  port: number;
  database: string;
  /** Directory of the SampleDB's backups, e.g. /backups/<sampledb>. */
  directory: string;
  backupName: string;
  waitSeconds?: number;
  terminationLog?: string;
}

/** From the credentials Secret: PGUSER/PGPASSWORD (the superuser, so the dump sees every object). */
export const BACKUP_SECRET_ENV = ['PGUSER', 'PGPASSWORD'] as const;

export function backupScriptEnv(settings: BackupScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-backup',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGAPPNAME: 'sampledb-backup',
    PGCONNECT_TIMEOUT: '10',
    HOME: '/tmp',
    SAMPLEDB_DATABASE: settings.database,
    SAMPLEDB_BACKUP_DIR: settings.directory,
    SAMPLEDB_BACKUP_NAME: settings.backupName,
    SAMPLEDB_WAIT_SECONDS: String(settings.waitSeconds ?? 120),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

/** The last line of the backup's output and its termination message. */
export interface BackupResult {
  sizeBytes: number;
  checksum: string;
}

/** Parses the backup result from a termination message or log; `undefined` when there is none. */
export function parseBackupResult(text: string | undefined): BackupResult | undefined {
  const lines = (text ?? '').trim().split('\n');
  const last = lines[lines.length - 1]?.trim();
  if (!last?.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(last) as Partial<BackupResult>;
    if (
      typeof value.sizeBytes !== 'number' ||
      !Number.isSafeInteger(value.sizeBytes) ||
      value.sizeBytes < 0
    ) {
      return undefined;
    }
    if (typeof value.checksum !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(value.checksum)) return undefined;
    return { sizeBytes: value.sizeBytes, checksum: value.checksum };
  } catch {
    return undefined;
  }
}

export const BACKUP_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
wait_for_server

mkdir -p "$SAMPLEDB_BACKUP_DIR"
dump="$SAMPLEDB_BACKUP_DIR/$SAMPLEDB_BACKUP_NAME.dump"
# Written aside and renamed, so a dump that exists under its name is always complete.
partial="$dump.partial"
rm -f "$partial"
pg_dump -Fc -d "$SAMPLEDB_DATABASE" -f "$partial"
checksum=$(sha256_of "$partial")
size=$(wc -c < "$partial" | tr -d ' ')
mv -f "$partial" "$dump"
printf '%s  %s\n' "$checksum" "$SAMPLEDB_BACKUP_NAME.dump" > "$dump.sha256"
log "wrote $dump ($size bytes, sha256:$checksum)"

result=$(printf '{"sizeBytes":%s,"checksum":"sha256:%s"}' "$size" "$checksum")
printf '%s' "$result" > "$SAMPLEDB_TERMINATION_LOG"
printf '%s\n' "$result"
`}`;
