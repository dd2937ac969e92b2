// The credentials Secret: created once, never re-applied (re-applying could rotate the password under a running
// database), or the user's own Secret, which must exist before anything that reads it is created.
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { LABELS } from '../../api/index.ts';
import { isStatus } from '../../runtime/index.ts';
import { credentialsSecret } from '../credentials.ts';
import { CONFIGMAPS, SECRETS } from '../resources.ts';
import { halt, type Step } from './context.ts';

export const ensureCredentials: Step = {
  name: 'credentials',
  async run(ctx) {
    const { instance, view, client } = ctx;
    const { namespace } = instance;
    const name = instance.credentials.secretName;
    const generated = instance.credentials.generated;
    let secret = view.get<V1Secret & { metadata: object }>(SECRETS, namespace, name);
    if (!secret && generated) {
      const desired = credentialsSecret(instance, undefined);
      if (desired) {
        try {
          secret = (await client.create(SECRETS, desired as never)) as never;
        } catch (err) {
          // Created by an earlier run the cache has not shown yet: never overwrite it, wait for the watch.
          if (isStatus(err, 409)) return halt(1000);
          throw err;
        }
      }
    } else if (secret && generated && secret.metadata.labels?.[LABELS.orphaned] === 'true') {
      // Kept by an earlier SampleDB of this name deleted under policy Retain, with the data volume its password
      // opens: adopt it as it is (the password must not change).
      secret = (await client.patch(
        SECRETS,
        { namespace, name },
        {
          metadata: {
            ownerReferences:
              credentialsSecret(instance, secret as V1Secret)?.metadata?.ownerReferences ?? null,
            labels: { [LABELS.orphaned]: null },
          },
        },
        'merge',
      )) as never;
    } else if (secret && generated && !secret.data?.password) {
      // An emptied password is no password: the one case where one is generated into the existing Secret.
      const desired = credentialsSecret(instance, secret as V1Secret);
      if (desired) secret = (await client.apply(SECRETS, desired as never)) as never;
    }
    ctx.observed.credentialsSecret = secret;
    const initSql = instance.spec.bootstrap.initSQL;
    if (initSql)
      ctx.observed.initSqlConfigMap = view.get<V1ConfigMap & { metadata: object }>(
        CONFIGMAPS,
        namespace,
        initSql.name,
      );
    // The status says which Secret to create; its creation triggers the next reconcile (watched by reference).
    if (!secret) return halt();
    return undefined;
  },
};
