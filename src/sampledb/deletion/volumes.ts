// The writes that hold, retain and release data volumes: the deletion, the live step (a claim deleted under a live
// SampleDB) and the clean-up after a SampleDB that is gone all use them. Each is idempotent (a finalizer already there
// or already gone, a reclaim policy already Retain), so a repeat after a crash is harmless.

import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { ANNOTATIONS, DATA_FINALIZER, EVENT_REASONS, LABELS } from '../../api/index.ts';
import {
  isNamespaceTerminating,
  isStatus,
  type KubeObject,
  type Logger,
  type Stored,
} from '../../runtime/index.ts';
import { PERSISTENT_VOLUMES, PVCS } from '../resources.ts';
import type { ClusterView } from '../view.ts';
import type { Writer } from '../writer.ts';
import type { BoundVolume } from './plan.ts';
import type { RetainDecision } from './retain.ts';

/** The data-volume writes: finalizers on claims, the reclaim policy of their volumes, and the Events saying so. */
export const VOLUME_WRITES = ['guarded-patch', 'patch', 'event'] as const;

/** Adds or removes our finalizer on each claim; a claim gone meanwhile (the cache lags) needs neither. */
async function eachClaim(
  view: ClusterView,
  namespace: string,
  names: readonly string[],
  write: (pvc: Stored<V1PersistentVolumeClaim>) => Promise<unknown>,
): Promise<void> {
  for (const name of names) {
    const pvc = view.get(PVCS, namespace, name);
    if (!pvc) continue;
    try {
      await write(pvc);
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }
}

/** Our finalizer on each claim not yet being deleted (one being deleted can take no new finalizer). */
export function holdVolumes(view: ClusterView, write: Writer, namespace: string, names: readonly string[]) {
  return eachClaim(view, namespace, names, (pvc) =>
    pvc.metadata.deletionTimestamp ? Promise.resolve() : write.addFinalizer(PVCS, pvc, DATA_FINALIZER),
  );
}

export function releaseVolumes(
  view: ClusterView,
  write: Writer,
  namespace: string,
  names: readonly string[],
) {
  return eachClaim(view, namespace, names, (pvc) => write.removeFinalizer(PVCS, pvc, DATA_FINALIZER));
}

export interface RetainTarget {
  readonly namespace: string;
  /** The SampleDB (or, once it is gone, its name) whose data the volumes hold. */
  readonly sampleDbName: string;
  /** For the Event on the SampleDB; absent when it is gone. */
  readonly sampleDb?: KubeObject;
  readonly write: Writer;
  readonly log: Logger;
}

/**
 * Switches each volume's PersistentVolume to reclaimPolicy Retain (labelled, and annotated with whose data it is and
 * why), says so in an Event on the volume (cluster-scoped, so in `default`: it outlives the namespace) and one on the
 * SampleDB when its namespace still takes Events, then marks the claim: the plan sees it retained and moves on.
 */
export async function retainVolumes(
  target: RetainTarget,
  volumes: readonly BoundVolume[],
  decision: RetainDecision,
): Promise<void> {
  const { namespace, sampleDbName, write, log } = target;
  for (const { pvc, pv } of volumes) {
    const written = await write.patch(
      PERSISTENT_VOLUMES,
      { namespace: '', name: pv },
      {
        metadata: {
          labels: { [LABELS.retained]: 'true' },
          annotations: {
            [ANNOTATIONS.retainedFrom]: `${namespace}/${sampleDbName}`,
            [ANNOTATIONS.retainedBecause]: decision.cause,
          },
        },
        spec: { persistentVolumeReclaimPolicy: 'Retain' },
      },
      { ifMissing: 'skip' },
    );
    const note = written
      ? `PersistentVolume ${pv} (claim ${namespace}/${pvc} of SampleDB ${sampleDbName}) is kept with reclaimPolicy Retain: ${decision.message} (${decision.cause}).`
      : `PersistentVolume ${pv} of claim ${namespace}/${pvc} was already gone; nothing to retain.`;
    if (written) {
      try {
        await write.event({
          regarding: { apiVersion: 'v1', kind: 'PersistentVolume', metadata: written.metadata },
          type: 'Warning',
          reason: EVENT_REASONS.volumeRetained,
          action: 'Retain',
          note,
        });
      } catch (err) {
        // Watching only some namespaces, the operator may write Events in `default` only if it watches that one
        // too (README Limits); the volume's labels and annotations, the log and the status still say it.
        if (!isStatus(err, 403)) throw err;
        log.warn({ pv }, 'no Event on the PersistentVolume: Events in namespace default are not granted');
      }
    }
    if (target.sampleDb) {
      try {
        await write.event({
          regarding: target.sampleDb,
          type: 'Warning',
          reason: EVENT_REASONS.volumeRetained,
          action: 'Retain',
          note,
        });
      } catch (err) {
        // A namespace being deleted refuses every create, Events too: the volume's Event and the status say it.
        if (!isNamespaceTerminating(err)) throw err;
      }
    }
    log.warn({ pvc, pv, cause: decision.cause }, note);
    await write.patch(
      PVCS,
      { namespace, name: pvc },
      { metadata: { annotations: { [ANNOTATIONS.retainedVolume]: pv } } },
      { ifMissing: 'skip' },
    );
  }
}
