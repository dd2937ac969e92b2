// Names of what a drill run creates: deterministic from the drill (or SampleDB) and the run number, so a resumed run
// finds what it created before and creates nothing twice.
import { MAX_NAME_LENGTH } from '../../api/index.ts';
import { boundedName } from '../names.ts';

export const canaryJobName = (drill: string, run: number) => boundedName(drill, `r${run}-canary`);
export const probeJobName = (drill: string, run: number) => boundedName(drill, `r${run}-probe`);
/** fill-disk: fills, holds and releases the primary's data volume. */
export const fillJobName = (drill: string, run: number) => boundedName(drill, `r${run}-fill`);
/** fill-disk: removes a ballast a failed fill Job may have left. */
export const releaseJobName = (drill: string, run: number) => boundedName(drill, `r${run}-release`);
/** isolate-primary: the Job that checks NetworkPolicy enforcement, and the deny-all egress policy over its pod. */
export const netcheckName = (drill: string, run: number) => boundedName(drill, `r${run}-netcheck`);
/** isolate-primary: the NetworkPolicy that isolates the primary pod. */
export const isolationPolicyName = (drill: string, run: number) => boundedName(drill, `r${run}-isolate`);
/** Every Job a run may create, for the clean-up at its end. */
export const runJobNames = (drill: string, run: number) => [
  canaryJobName(drill, run),
  probeJobName(drill, run),
  fillJobName(drill, run),
  releaseJobName(drill, run),
  netcheckName(drill, run),
];
/** Every NetworkPolicy a run may create: deleted before the run is recorded as finished. */
export const runPolicyNames = (drill: string, run: number) => [
  netcheckName(drill, run),
  isolationPolicyName(drill, run),
];

/**
 * restore-check's throw-away SampleDB: `<db>-drill<run>`, cut to the SampleDB name limit (its Services and pods are
 * named after it). Only runs of one drill at a time exist per SampleDB, so the run number keeps them apart.
 */
export function throwawayName(sampleDb: string, run: number): string {
  const suffix = `-drill${run}`;
  return `${sampleDb.slice(0, MAX_NAME_LENGTH - suffix.length).replace(/-+$/, '')}${suffix}`;
}
