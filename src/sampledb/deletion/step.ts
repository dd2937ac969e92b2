// Deleting a SampleDB: observe, plan one action (plan.ts), do it, observe again; stop at the first thing to wait for.
// Progress lives in the cluster (the final snapshot/backup objects, the StatefulSet, the PVCs' deletionTimestamps),
// so a restarted operator continues from there. The DeletionProtected condition reports it to the user.
import type { V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  API_VERSION,
  FINALIZER,
  KINDS,
  LABELS,
  REASONS,
  SAMPLEDB_CONDITIONS,
  type SampleDbBackupObject,
  type SampleDbObject,
} from '../../api/index.ts';
import { findCondition, isStatus, type KubeObject } from '../../runtime/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import { boundedName } from '../names.ts';
import {
  PODS,
  PVCS,
  SAMPLEDB_BACKUPS,
  SAMPLEDBS,
  SECRETS,
  STATEFULSETS,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOTS,
} from '../resources.ts';
import { ensureBackupVolume } from '../steps/backup-volume.ts';
import type { StepContext, StepResult } from '../steps/context.ts';
import { type DeletionAction, type DeletionObservation, type DeletionPlan, planDeletion } from './plan.ts';

const DEFAULT_SNAPSHOT_CLASS_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';

interface VolumeSnapshot extends KubeObject {
  spec?: { source?: { persistentVolumeClaimName?: string }; volumeSnapshotClassName?: string };
  status?: { readyToUse?: boolean; error?: { message?: string } };
}

const uidPrefix = (db: SampleDbObject) => (db.metadata.uid ?? '').slice(0, 8);

export function finalBackupName(instance: SampleDbInstance, attempt: number): string {
  return boundedName(instance.name, `final-${uidPrefix(instance.object)}-${attempt}`);
}

export function finalSnapshotName(instance: SampleDbInstance, pvcName: string): string {
  return boundedName(pvcName, `final-${uidPrefix(instance.object)}`);
}

/** A usable VolumeSnapshotClass: the default one, else the only one; none when the API is not served. */
function snapshotClass(ctx: StepContext): string | undefined {
  if (!ctx.view.watches(VOLUME_SNAPSHOT_CLASSES)) return undefined;
  const classes = ctx.view.list(VOLUME_SNAPSHOT_CLASSES, '');
  const preferred =
    classes.find((c) => c.metadata.annotations?.[DEFAULT_SNAPSHOT_CLASS_ANNOTATION] === 'true') ??
    (classes.length === 1 ? classes[0] : undefined);
  return preferred?.metadata.name;
}

export function observeDeletion(ctx: StepContext): DeletionObservation {
  const { db, instance, view } = ctx;
  const { namespace, names, spec } = instance;
  const uid = db.metadata.uid ?? '';
  const dataVolumes = view
    .list<V1PersistentVolumeClaim & KubeObject>(PVCS, namespace, {
      [LABELS.instance]: instance.name,
      [LABELS.component]: 'database',
    })
    .map((pvc) => ({
      name: pvc.metadata.name ?? '',
      deleting: Boolean(pvc.metadata.deletionTimestamp),
      orphaned: pvc.metadata.labels?.[LABELS.orphaned] === 'true',
    }));
  const snapshots = view.watches(VOLUME_SNAPSHOTS)
    ? view.list<VolumeSnapshot>(VOLUME_SNAPSHOTS, namespace, { [LABELS.finalForUid]: uid }).map((s) => ({
        name: s.metadata.name ?? '',
        pvcName: s.spec?.source?.persistentVolumeClaimName ?? '',
        readyToUse: s.status?.readyToUse === true,
        ...(s.status?.error?.message ? { error: s.status.error.message } : {}),
      }))
    : [];
  const allBackups = view.list<SampleDbBackupObject>(SAMPLEDB_BACKUPS, namespace);
  const backups = allBackups
    .filter((b) => b.metadata.labels?.[LABELS.finalForUid] === uid)
    .map((b) => {
      const failed = findCondition(b.status?.conditions as never, 'Failed');
      return {
        name: b.metadata.name ?? '',
        attempt: Number(b.metadata.annotations?.[ANNOTATIONS.attempt] ?? '1'),
        ...(b.status?.phase ? { phase: b.status.phase } : {}),
        ...(failed?.lastTransitionTime ? { failedAt: failed.lastTransitionTime } : {}),
        ...(b.status?.message ? { message: b.status.message } : {}),
      };
    });
  const sts = view.get<V1StatefulSet & KubeObject>(STATEFULSETS, namespace, names.statefulSet);
  const ownBackupVolume = !instance.backupClaim.operatorOwned
    ? undefined
    : view.get<V1PersistentVolumeClaim & KubeObject>(PVCS, namespace, names.backupPvc);
  const snapshotClassName = snapshotClass(ctx);
  return {
    policy: spec.deletion.policy,
    ...(snapshotClassName ? { snapshotClass: snapshotClassName } : {}),
    dataVolumes,
    snapshots,
    backups,
    statefulSet: !sts ? 'absent' : sts.metadata.deletionTimestamp ? 'deleting' : 'present',
    databasePodExists: view.get<V1Pod & KubeObject>(PODS, namespace, names.pod) !== undefined,
    ...(ownBackupVolume
      ? {
          backupVolume: {
            name: names.backupPvc,
            deleting: Boolean(ownBackupVolume.metadata.deletionTimestamp),
          },
        }
      : {}),
    backupObjects: allBackups
      .filter((b) => b.spec?.sampleDB?.name === instance.name && !b.metadata.deletionTimestamp)
      .map((b) => b.metadata.name ?? ''),
    now: ctx.now(),
  };
}

function finalBackup(instance: SampleDbInstance, attempt: number): SampleDbBackupObject {
  const db = instance.object;
  return {
    apiVersion: API_VERSION,
    kind: KINDS.sampleDbBackup,
    metadata: {
      name: finalBackupName(instance, attempt),
      namespace: instance.namespace,
      // No owner reference: the record of the final backup must outlive the SampleDB.
      labels: { ...instance.labels.backup, [LABELS.finalForUid]: db.metadata.uid ?? '' },
      annotations: { [ANNOTATIONS.attempt]: String(attempt) },
    },
    spec: { sampleDB: { name: instance.name }, method: 'pg_dump' },
  };
}

function volumeSnapshot(instance: SampleDbInstance, pvcName: string, className: string): VolumeSnapshot {
  return {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: {
      name: finalSnapshotName(instance, pvcName),
      namespace: instance.namespace,
      labels: { ...instance.labels.backup, [LABELS.finalForUid]: instance.object.metadata.uid ?? '' },
    },
    spec: { volumeSnapshotClassName: className, source: { persistentVolumeClaimName: pvcName } },
  };
}

/** Creates an object once; AlreadyExists means an earlier run created it, which is the same outcome. */
async function createOnce(ctx: StepContext, rt: typeof PVCS, obj: KubeObject): Promise<void> {
  try {
    await ctx.client.create(rt, obj as never);
  } catch (err) {
    if (!isStatus(err, 409)) throw err;
  }
}

type Outcome = 'again' | 'wait' | 'finished';

async function execute(ctx: StepContext, action: DeletionAction): Promise<Outcome> {
  const { db, instance, client } = ctx;
  const { namespace } = instance;
  const ref = (name: string) => ({ namespace, name });
  switch (action.kind) {
    case 'create-snapshot':
      await createOnce(ctx, VOLUME_SNAPSHOTS, volumeSnapshot(instance, action.pvcName, action.className));
      ctx.log.info({ pvc: action.pvcName }, 'final VolumeSnapshot requested');
      return 'again';
    case 'create-backup':
      // The backup is written to the backup volume; make sure there is one even if backups were never configured.
      await ensureBackupVolume(instance, ctx.view, client);
      await createOnce(ctx, SAMPLEDB_BACKUPS, finalBackup(instance, action.attempt));
      ctx.log.info({ attempt: action.attempt }, 'final backup requested');
      return 'again';
    case 'delete-statefulset':
      await client.delete(STATEFULSETS, ref(instance.names.statefulSet), { propagationPolicy: 'Background' });
      return 'again';
    case 'delete-data-volumes':
      for (const name of action.names) await client.delete(PVCS, ref(name));
      ctx.log.info({ pvcs: action.names }, 'data volumes deleted');
      return 'again';
    case 'orphan-data-volumes':
      // The generated password is the only one the retained data accepts: keep its Secret too (no owner, so the
      // garbage collector leaves it), and a new SampleDB of the same name opens the volume with it. First, so the
      // plan's observation (volumes orphaned) implies it.
      if (instance.credentials.generated) {
        try {
          await client.patch(
            SECRETS,
            ref(instance.credentials.secretName),
            { metadata: { ownerReferences: null, labels: { [LABELS.orphaned]: 'true' } } },
            'merge',
          );
        } catch (err) {
          if (!isStatus(err, 404)) throw err;
        }
      }
      for (const name of action.names)
        await client.patch(PVCS, ref(name), { metadata: { labels: { [LABELS.orphaned]: 'true' } } }, 'merge');
      return 'again';
    case 'delete-backup-objects':
      for (const name of action.names) await client.delete(SAMPLEDB_BACKUPS, ref(name));
      return 'again';
    case 'delete-backup-volume':
      await client.delete(PVCS, ref(action.name));
      return 'again';
    case 'remove-finalizer':
      ctx.db = await client.removeFinalizer(SAMPLEDBS, db as never, FINALIZER);
      return 'finished';
    case 'wait-snapshot':
    case 'wait-backup':
    case 'wait-workload-gone':
      return 'wait';
  }
}

function reportProgress(ctx: StepContext, plan: DeletionPlan): void {
  const { next } = plan;
  const set = (status: 'True' | 'False', reason: string, message: string) =>
    ctx.conditions.push({ type: SAMPLEDB_CONDITIONS.deletionProtected, status, reason, message });
  const policy = ctx.instance.spec.deletion.policy;
  if (plan.protected) {
    const how =
      plan.method === 'snapshot'
        ? 'the final VolumeSnapshots are ready'
        : plan.method === 'backup'
          ? `the final backup completed on PersistentVolumeClaim ${ctx.instance.backupClaim.name}`
          : policy === 'Snapshot'
            ? 'there was no data volume to protect'
            : `deletion.policy is ${policy}`;
    set('True', REASONS.protected, `Data may be removed: ${how}.`);
    return;
  }
  if (next.kind === 'wait-backup' && next.lastError) {
    set(
      'False',
      REASONS.finalBackupFailed,
      `The final backup ${next.name} failed: ${next.lastError}. Nothing was deleted; retrying in ${Math.ceil((next.retryInMs ?? 0) / 1000)}s. To delete without a backup, set spec.deletion.policy to Delete or Retain.`,
    );
  } else if (next.kind === 'wait-backup' || next.kind === 'create-backup') {
    set('False', REASONS.finalBackupRunning, 'Taking a final pg_dump backup before the volumes are removed.');
  } else if (next.kind === 'wait-snapshot' && next.errors.length > 0) {
    set(
      'False',
      REASONS.snapshotFailed,
      `Nothing was deleted; the final VolumeSnapshots report: ${next.errors.join('; ')}.`,
    );
  } else {
    set('False', REASONS.snapshotInProgress, 'Waiting for the final VolumeSnapshots to become readyToUse.');
  }
}

const MAX_ACTIONS_PER_RECONCILE = 16;
/** Waiting on the final backup/snapshot is watch-driven; this only bounds how stale a missed event can leave us. */
const WAIT_RECHECK_MS = 30_000;

/** Runs the deletion to completion or to the first wait. `removed` tells the caller the finalizer is gone. */
export async function runDeletion(ctx: StepContext): Promise<{ removed: boolean; result: StepResult }> {
  for (let i = 0; i < MAX_ACTIONS_PER_RECONCILE; i++) {
    const plan = planDeletion(observeDeletion(ctx));
    reportProgress(ctx, plan);
    ctx.log.debug({ action: plan.next.kind }, 'deletion step');
    const outcome = await execute(ctx, plan.next);
    if (outcome === 'finished') return { removed: true, result: undefined };
    if (outcome === 'wait') {
      const retry = plan.next.kind === 'wait-backup' ? plan.next.retryInMs : undefined;
      return { removed: false, result: { halt: true, requeueAfterMs: retry ?? WAIT_RECHECK_MS } };
    }
    ctx.conditions.length = 0;
  }
  return { removed: false, result: { halt: true, requeueAfterMs: 1000 } };
}
