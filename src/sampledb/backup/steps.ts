// The SampleDBBackup steps, the same shape as the SampleDB's (steps/context.ts): find the SampleDB, look at the backup
// Job, wait for the database, start the Job. The status (status.ts) is computed from what they observed.
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { OperatorDefaults, SampleDbBackupObject } from '../../api/index.ts';
import type { Stored } from '../../runtime/index.ts';
import { backupJob } from '../backup-job.ts';
import { resolveInstance, type SampleDbInstance } from '../instance.ts';
import { backupJobName } from '../names.ts';
import {
  JOBS,
  PODS,
  PVCS,
  SAMPLEDB_BACKUPS,
  SAMPLEDBS,
  STATEFULSETS,
  STORAGE_CLASSES,
} from '../resources.ts';
import { ensureBackupVolume } from '../steps/backup-volume.ts';
import type { Step } from '../steps/context.ts';
import { backupAhead } from './queue.ts';
import { decideSpace, type SpaceDecision } from './space.ts';

export interface BackupSubject {
  readonly backup: Stored<SampleDbBackupObject>;
  /** Operator-wide defaults of the desired objects (the PostgreSQL image repository). */
  readonly defaults: OperatorDefaults;
}

export interface BackupObservation {
  /** The SampleDB the backup is of, resolved; absent when it does not exist. */
  instance?: SampleDbInstance;
  job?: Stored<V1Job>;
  pods?: readonly Stored<V1Pod>[];
  /** The Job was created by this reconcile. */
  started?: boolean;
  /** Another backup of the same SampleDB runs (or goes) first. */
  waitingFor?: string;
  /** Room on the backup volume, when there was not enough. */
  space?: SpaceDecision;
}

type BackupStep = Step<BackupObservation, BackupSubject>;

export const findSampleDb: BackupStep = {
  name: 'sampledb',
  writes: [],
  async run({ backup, defaults, view }) {
    const db = view.get(SAMPLEDBS, backup.metadata.namespace ?? '', backup.spec.sampleDB.name);
    return db ? { observed: { instance: resolveInstance(db, defaults) } } : { halt: true };
  },
};

export const observeJob: BackupStep = {
  name: 'job',
  writes: [],
  async run({ backup, view }) {
    const job = view.get(JOBS, backup.metadata.namespace ?? '', backupJobName(backup.metadata.name ?? ''));
    if (!job) return undefined;
    // Once there is a Job, its result is all that is left to report.
    return { observed: { job, pods: view.ownedBy(PODS, job.metadata.uid) }, halt: true };
  },
};

export const waitForTurn: BackupStep = {
  name: 'queue',
  writes: [],
  async run({ backup, view }) {
    const waitingFor = backupAhead(backup, view.list(SAMPLEDB_BACKUPS, backup.metadata.namespace ?? ''));
    return waitingFor ? { observed: { waitingFor }, halt: true } : undefined;
  },
};

export const waitForDatabase: BackupStep = {
  name: 'database-ready',
  writes: [],
  async run({ observed, view }) {
    const instance = observed.instance;
    if (!instance) return { halt: true };
    const sts = view.get(STATEFULSETS, instance.namespace, instance.names.statefulSet);
    return (sts?.status?.readyReplicas ?? 0) < 1 ? { halt: true } : undefined;
  },
};

export const checkSpace: BackupStep = {
  name: 'space',
  writes: ['patch'],
  async run({ observed, view, write, log }) {
    const instance = observed.instance;
    if (!instance) return { halt: true };
    const { namespace } = instance;
    const claimName = instance.backupClaim.name;
    const pvc = view.get(PVCS, namespace, claimName);
    const className = pvc?.spec?.storageClassName;
    const space = decideSpace({
      dbName: instance.name,
      claimName,
      operatorOwned: instance.backupClaim.operatorOwned,
      pvc,
      storageClass: className ? view.get(STORAGE_CLASSES, '', className) : undefined,
      backups: view.list(SAMPLEDB_BACKUPS, namespace),
    });
    if (space.kind === 'enough') return undefined;
    if (space.kind === 'grow') {
      await write.patch(
        PVCS,
        { namespace, name: claimName },
        { spec: { resources: { requests: { storage: space.to } } } },
      );
      log.info({ pvc: claimName, to: space.to }, 'growing the backup volume for the next dump');
    }
    return { observed: { space }, halt: true };
  },
};

export const startBackupJob: BackupStep = {
  name: 'start-job',
  writes: ['create-once', 'apply'],
  async run({ backup, observed, view, write, log }) {
    const instance = observed.instance;
    if (!instance) return { halt: true };
    await ensureBackupVolume(instance, view, write);
    const job = await write.apply(JOBS, backupJob(instance, backup));
    log.info({ job: job.metadata.name }, 'backup Job created');
    return { observed: { job, pods: [], started: true } };
  },
};

/** The order matters: each step relies on what the ones before it observed. */
export const BACKUP_STEPS: readonly BackupStep[] = [
  findSampleDb,
  observeJob,
  waitForTurn,
  waitForDatabase,
  checkSpace,
  startBackupJob,
];
