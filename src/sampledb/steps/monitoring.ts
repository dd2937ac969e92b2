// spec.monitoring.exporter: the monitoring Secret, created once before the StatefulSet reads it (never re-applied
// while it holds a password: the role in the database has that one), and, once the init Job has succeeded, the
// role Job that gives the role that password. One role Job per Secret: enabling the exporter on an existing
// SampleDB, or a regenerated Secret, each get theirs.
import type { V1Job, V1Secret } from '@kubernetes/client-node';
import { isStatus } from '../../runtime/index.ts';
import { monitoringSecret, monitoringSecretName } from '../exporter.ts';
import { monitoringRoleJob, monitoringRoleJobName } from '../monitoring-role-job.ts';
import { JOBS, SECRETS } from '../resources.ts';
import { halt, type Step } from './context.ts';

type Secret = V1Secret & { metadata: object };

export const ensureMonitoring: Step = {
  name: 'monitoring',
  async run(ctx) {
    const { db, namespace, names, view, client } = ctx;
    let secret = view.get<Secret>(SECRETS, namespace, monitoringSecretName(db));
    const desired = monitoringSecret(db, secret);
    if (!desired) return undefined;
    if (!secret) {
      try {
        secret = (await client.create(SECRETS, desired as never)) as Secret;
      } catch (err) {
        // Created by an earlier run the cache has not shown yet: never overwrite it, wait for the watch.
        if (isStatus(err, 409)) return halt(1000);
        throw err;
      }
    } else if (!secret.data?.password) {
      secret = (await client.apply(SECRETS, desired as never)) as Secret;
    }
    const initJob = view.get<V1Job & { metadata: object }>(JOBS, namespace, names.initJob);
    const secretUid = secret.metadata?.uid;
    if ((initJob?.status?.succeeded ?? 0) > 0 && secretUid) {
      if (!view.get(JOBS, namespace, monitoringRoleJobName(db, secretUid)))
        await client.apply(JOBS, monitoringRoleJob(db, secretUid, ctx.defaults) as never);
    }
    return undefined;
  },
};
