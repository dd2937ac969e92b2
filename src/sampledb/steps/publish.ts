// How applications find the database: the connection ConfigMap (no password) and the servicebinding.io Secret.
import { bindingSecret, connectionConfigMap } from '../connection.ts';
import { readCredentials } from '../credentials.ts';
import { CONFIGMAPS, SECRETS } from '../resources.ts';
import type { Step } from './context.ts';

export const publishConnection: Step = {
  name: 'publish',
  async run(ctx) {
    await ctx.client.apply(CONFIGMAPS, connectionConfigMap(ctx.instance) as never);
    const credentials = readCredentials(ctx.observed.credentialsSecret);
    if (credentials) {
      ctx.observed.bindingSecret = (await ctx.client.apply(
        SECRETS,
        bindingSecret(ctx.instance, credentials.password) as never,
      )) as never;
    }
    return undefined;
  },
};
