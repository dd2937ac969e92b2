// postgresql.conf and the two Services: plain server-side apply of the pure builders; the client Service's
// EndpointSlices are observed for the Ready condition.
import { postgresConfigMap } from '../postgres-config.ts';
import { CONFIGMAPS, ENDPOINT_SLICES, SERVICES } from '../resources.ts';
import { clientService, headlessService, SERVICE_NAME_LABEL } from '../services.ts';
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
  async run({ instance, view, write }) {
    await write.apply(SERVICES, headlessService(instance));
    await write.apply(SERVICES, clientService(instance));
    // Which pods the client Service routes to: the database is Ready only once clients reach it (status.ts).
    const clientEndpointSlices = view.list(ENDPOINT_SLICES, instance.namespace, {
      [SERVICE_NAME_LABEL]: instance.names.clientService,
    });
    return { observed: { clientEndpointSlices } };
  },
};
