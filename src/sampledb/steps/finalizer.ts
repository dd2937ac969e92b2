// The finalizer goes on before anything is created, so no child can exist without the deletion policy applying.
import { FINALIZER } from '../../api/index.ts';
import { SAMPLEDBS } from '../resources.ts';
import type { Step } from './context.ts';

export const ensureFinalizer: Step = {
  name: 'finalizer',
  writes: ['guarded-patch'],
  async run({ instance, observed, write }) {
    const db = observed.sampleDb ?? instance.object;
    if (db.metadata.finalizers?.includes(FINALIZER)) return undefined;
    return { observed: { sampleDb: await write.addFinalizer(SAMPLEDBS, db, FINALIZER) } };
  },
};
