// The superuser and owner credentials Secrets: created once, never re-applied (re-applying could rotate a password
// under a running database), or, for the owner, the user's own Secret, which must exist before anything that reads
// it is created.
import type { V1Secret } from '@kubernetes/client-node';
import { LABELS } from '../../api/index.ts';
import type { Stored } from '../../runtime/index.ts';
import { credentialsSecret, superuserSecret } from '../credentials.ts';
import type { SampleDbInstance } from '../instance.ts';
import { CONFIGMAPS, SECRETS } from '../resources.ts';
import type { ClusterView } from '../view.ts';
import type { Writer } from '../writer.ts';
import { halt, type Step } from './context.ts';

/**
 * A Secret the operator generates: created once, adopted as it is when an earlier SampleDB of this name left it
 * behind under policy Retain (with the data volume its password opens), and given a password only when emptied.
 * `undefined`: created by an earlier run the cache has not shown yet (never overwrite it, wait for the watch).
 */
async function ensureGenerated(
  instance: SampleDbInstance,
  view: ClusterView,
  write: Writer,
  desired: (existing: V1Secret | undefined) => V1Secret,
): Promise<Stored<V1Secret> | undefined> {
  const { namespace } = instance;
  const name = desired(undefined).metadata?.name ?? '';
  const secret = view.get(SECRETS, namespace, name);
  if (!secret) return await write.createOnce(SECRETS, desired(undefined));
  if (secret.metadata.labels?.[LABELS.orphaned] === 'true') {
    return await write.patch(
      SECRETS,
      { namespace, name },
      {
        metadata: {
          ownerReferences: desired(secret).metadata?.ownerReferences ?? null,
          labels: { [LABELS.orphaned]: null },
        },
      },
    );
  }
  // An emptied password is no password: the one case where one is generated into the existing Secret.
  if (!secret.data?.password) return await write.apply(SECRETS, desired(secret));
  return secret;
}

export const ensureCredentials: Step = {
  name: 'credentials',
  writes: ['create-once', 'patch', 'apply'],
  async run({ instance, view, write }) {
    const { namespace } = instance;
    const superuser = await ensureGenerated(instance, view, write, (existing) =>
      superuserSecret(instance, existing),
    );
    if (!superuser) return halt(1000);
    let secret: V1Secret | undefined;
    if (instance.credentials.generated) {
      secret = await ensureGenerated(
        instance,
        view,
        write,
        (existing) => credentialsSecret(instance, existing) as V1Secret,
      );
      if (!secret) return halt(1000);
    } else {
      secret = view.get(SECRETS, namespace, instance.credentials.secretName);
    }
    const initSql = instance.spec.bootstrap.initSQL;
    const observed = {
      superuserSecret: superuser,
      ...(secret ? { credentialsSecret: secret } : {}),
      ...(initSql ? { initSqlConfigMap: view.get(CONFIGMAPS, namespace, initSql.name) } : {}),
    };
    // The status says which Secret to create; its creation triggers the next reconcile (watched by reference).
    return secret ? { observed } : { observed, halt: true };
  },
};
