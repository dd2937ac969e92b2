// The credentials Secret: created once, never re-applied (re-applying could rotate the password under a running
// database), or the user's own Secret, which must exist before anything that reads it is created.
import { LABELS } from '../../api/index.ts';
import { credentialsSecret } from '../credentials.ts';
import { CONFIGMAPS, SECRETS } from '../resources.ts';
import { halt, type Step } from './context.ts';

export const ensureCredentials: Step = {
  name: 'credentials',
  writes: ['create-once', 'patch', 'apply'],
  async run({ instance, view, write }) {
    const { namespace } = instance;
    const { secretName: name, generated } = instance.credentials;
    let secret = view.get(SECRETS, namespace, name);
    if (!secret && generated) {
      const desired = credentialsSecret(instance, undefined);
      if (desired) {
        secret = await write.createOnce(SECRETS, desired);
        // Created by an earlier run the cache has not shown yet: never overwrite it, wait for the watch.
        if (!secret) return halt(1000);
      }
    } else if (secret && generated && secret.metadata.labels?.[LABELS.orphaned] === 'true') {
      // Kept by an earlier SampleDB of this name deleted under policy Retain, with the data volume its password
      // opens: adopt it as it is (the password must not change).
      secret = await write.patch(
        SECRETS,
        { namespace, name },
        {
          metadata: {
            ownerReferences: credentialsSecret(instance, secret)?.metadata?.ownerReferences ?? null,
            labels: { [LABELS.orphaned]: null },
          },
        },
      );
    } else if (secret && generated && !secret.data?.password) {
      // An emptied password is no password: the one case where one is generated into the existing Secret.
      const desired = credentialsSecret(instance, secret);
      if (desired) secret = await write.apply(SECRETS, desired);
    }
    const initSql = instance.spec.bootstrap.initSQL;
    const observed = {
      ...(secret ? { credentialsSecret: secret } : {}),
      ...(initSql ? { initSqlConfigMap: view.get(CONFIGMAPS, namespace, initSql.name) } : {}),
    };
    // The status says which Secret to create; its creation triggers the next reconcile (watched by reference).
    return secret ? { observed } : { observed, halt: true };
  },
};
