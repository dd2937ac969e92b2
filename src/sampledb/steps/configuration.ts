// postgresql.conf and the two Services: plain server-side apply of the pure builders.

import { postgresConfigMap } from '../postgres-config.ts';
import { CONFIGMAPS, SERVICES } from '../resources.ts';
import { clientService, headlessService } from '../services.ts';
import type { Step } from './context.ts';

export const applyConfig: Step = {
  name: 'config',
  async run(ctx) {
    await ctx.client.apply(CONFIGMAPS, postgresConfigMap(ctx.instance) as never);
    return undefined;
  },
};

export const applyServices: Step = {
  name: 'services',
  async run(ctx) {
    await ctx.client.apply(SERVICES, headlessService(ctx.instance) as never);
    await ctx.client.apply(SERVICES, clientService(ctx.instance) as never);
    return undefined;
  },
};
