// How applications find the database: the connection ConfigMap (no password) and the servicebinding.io Secret.
import { bindingSecret, connectionConfigMap } from '../connection.ts';
import { readCredentials } from '../credentials.ts';
import { CONFIGMAPS, SECRETS } from '../resources.ts';
import type { Step } from './context.ts';

export const publishConnection: Step = {
  name: 'publish',
  writes: ['apply'],
  async run({ instance, observed, write }) {
    await write.apply(CONFIGMAPS, connectionConfigMap(instance));
    const credentials = readCredentials(observed.credentialsSecret);
    if (!credentials) return undefined;
    return {
      observed: { bindingSecret: await write.apply(SECRETS, bindingSecret(instance, credentials.password)) },
    };
  },
};
