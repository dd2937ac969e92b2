// Every name the operator gives a child of a SampleDB, derived from the SampleDB's name in this one place, so the
// builders, the reconciler, the status and the tests can never disagree about what an object is called.
import { createHash } from 'node:crypto';
import { clientNamesFor } from '../api/index.ts';

/** Kubernetes label values, Job names (they become a pod label) and Service names are limited to 63 characters. */
const MAX_LABEL_LENGTH = 63;

/** The name of the data volume claim template; the StatefulSet controller names the PVC `data-<sts>-<ordinal>`. */
export const DATA_VOLUME_CLAIM_TEMPLATE = 'data';

/** Key of postgresql.conf in the config ConfigMap. */
export const POSTGRESQL_CONF_KEY = 'postgresql.conf';

export interface SampleDbNames {
  readonly statefulSet: string;
  readonly headlessService: string;
  readonly clientService: string;
  /** The generated credentials Secret (unused when the user supplies `bootstrap.credentialsSecret`). */
  readonly generatedCredentialsSecret: string;
  /** The superuser's Secret: always generated, never handed to applications. */
  readonly superuserSecret: string;
  /** The monitoring role's Secret (only with `monitoring.exporter.enabled`). */
  readonly monitoringSecret: string;
  readonly connectionConfigMap: string;
  readonly bindingSecret: string;
  readonly configConfigMap: string;
  readonly initJob: string;
  /** The backup PVC the operator creates (unused when `backup.volume.claimName` is given). */
  readonly backupPvc: string;
  readonly dataVolumeClaimTemplate: string;
  /** The data PVC of the single pod. */
  readonly dataPvc: string;
  readonly pod: string;
}

export function namesFor(sampleDbName: string): SampleDbNames {
  // What applications see (client Service, binding Secret, connection ConfigMap) is the API's contract.
  const client = clientNamesFor(sampleDbName);
  return {
    statefulSet: sampleDbName,
    headlessService: `${sampleDbName}-headless`,
    clientService: client.service,
    generatedCredentialsSecret: `${sampleDbName}-credentials`,
    superuserSecret: `${sampleDbName}-superuser`,
    monitoringSecret: `${sampleDbName}-monitoring`,
    connectionConfigMap: client.connectionConfigMap,
    bindingSecret: client.bindingSecret,
    configConfigMap: `${sampleDbName}-config`,
    initJob: `${sampleDbName}-init`,
    backupPvc: `${sampleDbName}-backups`,
    dataVolumeClaimTemplate: DATA_VOLUME_CLAIM_TEMPLATE,
    dataPvc: `${DATA_VOLUME_CLAIM_TEMPLATE}-${sampleDbName}-0`,
    pod: `${sampleDbName}-0`,
  };
}

/**
 * `base-suffix` when it fits in 63 characters; otherwise `base` is cut and a hash of the full name keeps distinct
 * long names distinct. SampleDBBackup names may be up to 253 characters, their Jobs may not.
 */
export function boundedName(base: string, suffix: string): string {
  const full = `${base}-${suffix}`;
  if (full.length <= MAX_LABEL_LENGTH) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 8);
  const room = MAX_LABEL_LENGTH - suffix.length - hash.length - 2;
  return `${base.slice(0, room).replace(/[-.]+$/, '')}-${hash}-${suffix}`;
}

/** The Job that runs one SampleDBBackup. */
export function backupJobName(backupName: string): string {
  return boundedName(backupName, 'backup');
}

/** The Job that verifies one SampleDBBackup's dump (spec.backup.verify). */
export function verifyJobName(backupName: string): string {
  return boundedName(backupName, 'verify');
}

/** Where a backup's dump lives, relative to the root of the backup volume. */
export function backupDumpPath(sampleDbName: string, backupName: string): string {
  return `${sampleDbName}/${backupName}.dump`;
}

// An in-place restore builds the restored copy in a database of its own and then switches the names (ADR 0014). Both
// names are PostgreSQL identifiers (at most 63 bytes): the SampleDB's database name (`[a-z_][a-z0-9_]{0,62}`) cut
// to 44 characters, then a fixed tail.
const DATABASE_PREFIX_LENGTH = 44;

/** The database an in-place restore restores into before the switch; one restore of a SampleDB runs at a time. */
export function restoreStagingDatabase(database: string): string {
  return `${database.slice(0, DATABASE_PREFIX_LENGTH)}_sdb_restoring`;
}

/** What the live database is renamed to by the switch of restore `restoreName`: the data it replaced. */
export function restorePreviousDatabase(database: string, restoreName: string): string {
  const hash = createHash('sha256').update(restoreName).digest('hex').slice(0, 8);
  return `${database.slice(0, DATABASE_PREFIX_LENGTH)}_sdb_pre_${hash}`;
}

/** True when `name` is a database a restore of `database` renamed the live data to. */
export function isRestorePreviousDatabase(database: string, name: string): boolean {
  const prefix = `${database.slice(0, DATABASE_PREFIX_LENGTH)}_sdb_pre_`;
  return name.startsWith(prefix) && /^[0-9a-f]{8}$/.test(name.slice(prefix.length));
}
