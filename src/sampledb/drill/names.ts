// Names of what a drill run creates: deterministic from the drill (or SampleDB) and the run number, so a resumed run
// finds what it created before and creates nothing twice.
import { MAX_NAME_LENGTH } from '../../api/index.ts';
import { boundedName } from '../names.ts';

export const canaryJobName = (drill: string, run: number) => boundedName(drill, `r${run}-canary`);
export const probeJobName = (drill: string, run: number) => boundedName(drill, `r${run}-probe`);

/**
 * restore-check's throw-away SampleDB: `<db>-drill<run>`, cut to the SampleDB name limit (its Services and pods are
 * named after it). Only runs of one drill at a time exist per SampleDB, so the run number keeps them apart.
 */
export function throwawayName(sampleDb: string, run: number): string {
  const suffix = `-drill${run}`;
  return `${sampleDb.slice(0, MAX_NAME_LENGTH - suffix.length).replace(/-+$/, '')}${suffix}`;
}
