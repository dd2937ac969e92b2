// Room for the next dump on the backup volume, decided before the backup Job starts: pure. The volume's capacity
// (the PVC's status) less the dumps the SampleDBBackups on it say they wrote is what is free; the next dump is
// expected to be the last one of this SampleDB plus a margin. Too little: the operator's own backup PVC is grown
// when its StorageClass allows expansion, otherwise the backup fails saying how much it needs.
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { parseQuantity, type SampleDbBackupObject } from '../../api/index.ts';
import { parseBackupLocation } from '../steps/init-job.ts';

/** Dumps grow with the data: room for the last one plus this much. */
export const DUMP_GROWTH_MARGIN = 1.2;
const GI = 2 ** 30;

export interface SpaceInput {
  dbName: string;
  claimName: string;
  /** Whether the operator created the claim (only then does it grow it). */
  operatorOwned: boolean;
  pvc: V1PersistentVolumeClaim | undefined;
  storageClass: V1StorageClass | undefined;
  /** The SampleDBBackups in the namespace. */
  backups: readonly SampleDbBackupObject[];
}

export type SpaceDecision =
  | { kind: 'enough' }
  | { kind: 'grow'; to: string; neededBytes: number; freeBytes: number }
  | { kind: 'growing'; requested: string; capacity: string }
  | { kind: 'insufficient'; neededBytes: number; freeBytes: number; capacity: string };

const onClaim = (b: SampleDbBackupObject, claim: string) =>
  parseBackupLocation(b.status?.location)?.claimName === claim;

export function decideSpace(input: SpaceInput): SpaceDecision {
  const capacity = input.pvc?.status?.capacity?.storage;
  const requested = input.pvc?.spec?.resources?.requests?.storage;
  const capacityBytes = capacity === undefined ? undefined : parseQuantity(capacity);
  if (capacity === undefined || capacityBytes === undefined) return { kind: 'enough' };
  const completed = input.backups.filter(
    (b) => b.status?.phase === 'Completed' && !b.metadata.deletionTimestamp && onClaim(b, input.claimName),
  );
  const last = completed
    .filter((b) => b.spec?.sampleDB?.name === input.dbName)
    .sort((a, b) =>
      String(b.status?.completedAt ?? '').localeCompare(String(a.status?.completedAt ?? '')),
    )[0];
  const lastSize = last?.status?.sizeBytes;
  if (lastSize === undefined) return { kind: 'enough' };
  const neededBytes = Math.ceil(lastSize * DUMP_GROWTH_MARGIN);
  const usedBytes = completed.reduce((sum, b) => sum + (b.status?.sizeBytes ?? 0), 0);
  const freeBytes = Math.max(0, capacityBytes - usedBytes);
  if (freeBytes >= neededBytes) return { kind: 'enough' };
  const requestedBytes = requested === undefined ? undefined : parseQuantity(requested);
  if (requested !== undefined && requestedBytes !== undefined && requestedBytes > capacityBytes)
    return { kind: 'growing', requested, capacity };
  if (input.operatorOwned && input.storageClass?.allowVolumeExpansion === true) {
    // Room for two more dumps, in whole GiB, so a growing database does not ask again at every backup.
    const to = `${Math.ceil((usedBytes + 2 * neededBytes) / GI)}Gi`;
    return { kind: 'grow', to, neededBytes, freeBytes };
  }
  return { kind: 'insufficient', neededBytes, freeBytes, capacity };
}

const mib = (bytes: number) => `${Math.ceil(bytes / 2 ** 20)} MiB`;

/** The Failed message of a backup the volume has no room for. */
export function insufficientMessage(
  claimName: string,
  d: Extract<SpaceDecision, { kind: 'insufficient' }>,
): string {
  return `The backup volume ${claimName} has about ${mib(d.freeBytes)} free of ${d.capacity}; this backup needs about ${mib(d.neededBytes)} (the last dump plus ${Math.round((DUMP_GROWTH_MARGIN - 1) * 100)}%). Grow the PersistentVolumeClaim (its StorageClass does not allow expansion, or it is not the operator's), or set spec.backup.retention.`;
}
