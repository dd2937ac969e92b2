// postgresql.conf and the two Services: plain server-side apply of the pure builders.
import { postgresConfigMap } from '../postgres-config.ts';
import { CONFIGMAPS, SERVICES } from '../resources.ts';
import { clientService, headlessService } from '../services.ts';
import type { Step } from './context.ts';

export const applyConfig: Step = {
  name: 'config',
  writes: ['apply'],
  async run({ instance, write }) {
    await write.apply(CONFIGMAPS, postgresConfigMap(instance));
    return undefined;
  },
};

export const applyServices: Step = {
  name: 'services',
  writes: ['apply'],
  async run({ instance, write }) {
    await write.apply(SERVICES, headlessService(instance));
    await write.apply(SERVICES, clientService(instance));
    return undefined;
  },
};
