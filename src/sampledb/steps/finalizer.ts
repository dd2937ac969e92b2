// The finalizer goes on before anything is created, so no child can exist without the deletion policy applying.
import { FINALIZER } from '../../api/index.ts';
import { SAMPLEDBS } from '../resources.ts';
import type { Step } from './context.ts';

export const ensureFinalizer: Step = {
  name: 'finalizer',
  async run(ctx) {
    if (ctx.db.metadata.finalizers?.includes(FINALIZER)) return undefined;
    ctx.db = await ctx.client.addFinalizer(SAMPLEDBS, ctx.db as never, FINALIZER);
    return undefined;
  },
};
