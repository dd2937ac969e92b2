// The SampleDBBackup controller: runs the backup Job once the database serves, and turns the Job's result (the
// termination message of its container) into status.phase/size/checksum/location.
import { isDeepStrictEqual } from 'node:util';
import type { V1Job, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import {
  API_VERSION,
  BACKUP_CONDITIONS,
  EVENT_REASONS,
  KINDS,
  REASONS,
  type SampleDbBackupObject,
  type SampleDbBackupStatus,
  type SampleDbObject,
} from '../api/index.ts';
import {
  type Condition,
  type KubeObject,
  mergeConditions,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '../runtime/index.ts';
import { backupJob, backupLocation } from './backup-job.ts';
import { backupOutcome, backupStatus } from './backup-status.ts';
import { resolveInstance } from './instance.ts';
import { backupJobName } from './names.ts';
import { JOBS, PODS, SAMPLEDB_BACKUPS, SAMPLEDBS, STATEFULSETS } from './resources.ts';
import { ensureBackupVolume } from './steps/backup-volume.ts';
import type { SampleDbDeps } from './steps/context.ts';

type Cached<T> = T & KubeObject;

function pending(previous: SampleDbBackupStatus | undefined, reason: string, message: string, now: Date) {
  return {
    ...previous,
    phase: 'Pending' as const,
    message,
    conditions: mergeConditions(
      (previous?.conditions ?? []) as Condition[],
      [{ type: BACKUP_CONDITIONS.completed, status: 'False', reason, message }],
      now,
    ),
  };
}

export class SampleDbBackupReconciler implements Reconciler {
  readonly #deps: SampleDbDeps;

  constructor(deps: SampleDbDeps) {
    this.#deps = deps;
  }

  async reconcile(req: ReconcileRequest, ctx: ReconcileContext): Promise<ReconcileResult> {
    const { view, client } = this.#deps;
    const now = (this.#deps.now ?? (() => new Date()))();
    const backup = view.get<SampleDbBackupObject>(SAMPLEDB_BACKUPS, req.namespace, req.name);
    if (!backup || backup.metadata.deletionTimestamp) return undefined;
    const phase = backup.status?.phase;
    if (phase === 'Completed' || phase === 'Failed') return undefined;

    const dbName = backup.spec.sampleDB.name;
    const found = view.get<SampleDbObject>(SAMPLEDBS, req.namespace, dbName);
    const db = found ? resolveInstance(found, this.#deps.defaults) : undefined;
    const job = view.get<Cached<V1Job>>(JOBS, req.namespace, backupJobName(req.name));
    let status: SampleDbBackupStatus;
    if (job && db) {
      const pods = view.ownedBy<Cached<V1Pod>>(PODS, job.metadata.uid);
      status = backupStatus(
        backup.status,
        backupOutcome(job, pods),
        backupLocation(db, req.name),
        backup.metadata.generation,
        now,
      );
    } else if (!db) {
      status = pending(
        backup.status,
        REASONS.sampleDbNotFound,
        `SampleDB ${dbName} was not found in this namespace.`,
        now,
      );
    } else {
      const sts = view.get<Cached<V1StatefulSet>>(STATEFULSETS, req.namespace, db.names.statefulSet);
      if ((sts?.status?.readyReplicas ?? 0) < 1) {
        status = pending(
          backup.status,
          REASONS.databaseNotReady,
          `Waiting for SampleDB ${dbName} to accept connections before pg_dump can run.`,
          now,
        );
      } else {
        await ensureBackupVolume(db, view, client);
        const created = await client.apply<Cached<V1Job>>(JOBS, backupJob(db, backup) as never);
        ctx.log.info({ job: created.metadata.name }, 'backup Job created');
        status = backupStatus(
          backup.status,
          { phase: 'Running' },
          backupLocation(db, req.name),
          backup.metadata.generation,
          now,
        );
      }
    }
    if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), backup.status ?? {})) return undefined;
    await client.applyStatus(SAMPLEDB_BACKUPS, {
      apiVersion: API_VERSION,
      kind: KINDS.sampleDbBackup,
      metadata: { name: req.name, namespace: req.namespace },
      status,
    } as never);
    if (status.phase === 'Completed' || status.phase === 'Failed') {
      await client
        .event({
          regarding: backup as never,
          type: status.phase === 'Completed' ? 'Normal' : 'Warning',
          reason: status.phase === 'Completed' ? EVENT_REASONS.backupCompleted : EVENT_REASONS.backupFailed,
          action: 'Backup',
          note: status.message ?? status.phase,
        })
        .catch((err: unknown) => ctx.log.warn({ err: String(err) }, 'could not record event'));
    }
    return undefined;
  }
}
