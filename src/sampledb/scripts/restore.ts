// The restore script: verify a dump's checksum, then pg_restore --clean --if-exists into the database.
import { COMMON_FUNCTIONS } from './common.ts';

export interface RestoreScriptSettings {
  host: string;
  port: number;
  database: string;
  owner: string;
  dump: string;
  /** "sha256:<hex>" from the SampleDBBackup's status; without it, the dump's .sha256 file is the reference. */
  checksum?: string;
  waitSeconds?: number;
  terminationLog?: string;
}

export const RESTORE_SECRET_ENV = ['PGUSER', 'PGPASSWORD'] as const;

export function restoreScriptEnv(settings: RestoreScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-restore',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGAPPNAME: 'sampledb-restore',
    PGCONNECT_TIMEOUT: '10',
    HOME: '/tmp',
    SAMPLEDB_DATABASE: settings.database,
    SAMPLEDB_OWNER: settings.owner,
    SAMPLEDB_RESTORE_DUMP: settings.dump,
    SAMPLEDB_RESTORE_CHECKSUM: settings.checksum ?? '',
    SAMPLEDB_WAIT_SECONDS: String(settings.waitSeconds ?? 120),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

export const RESTORE_SCRIPT = `${COMMON_FUNCTIONS}
wait_for_server
restore_dump "$SAMPLEDB_RESTORE_DUMP"
`;
