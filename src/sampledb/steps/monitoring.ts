// spec.monitoring.exporter: the monitoring Secret, created once before the StatefulSet reads it (never re-applied
// while it holds a password: the role in the database has that one), and, once the init Job has succeeded, the
// role Job that gives the role that password. One role Job per Secret: enabling the exporter on an existing
// SampleDB, or a regenerated Secret, each get theirs.
import { monitoringSecret } from '../exporter.ts';
import { monitoringRoleJob, monitoringRoleJobName } from '../monitoring-role-job.ts';
import { JOBS, SECRETS } from '../resources.ts';
import { halt, type Step } from './context.ts';

export const ensureMonitoring: Step = {
  name: 'monitoring',
  writes: ['create-once', 'apply'],
  async run({ instance, view, write }) {
    const { namespace, names } = instance;
    let secret = view.get(SECRETS, namespace, names.monitoringSecret);
    const desired = monitoringSecret(instance, secret);
    if (!desired) return undefined;
    if (!secret) {
      secret = await write.createOnce(SECRETS, desired);
      // Created by an earlier run the cache has not shown yet: never overwrite it, wait for the watch.
      if (!secret) return halt(1000);
    } else if (!secret.data?.password) {
      secret = await write.apply(SECRETS, desired);
    }
    const initJob = view.get(JOBS, namespace, names.initJob);
    const secretUid = secret.metadata.uid;
    if ((initJob?.status?.succeeded ?? 0) > 0 && secretUid) {
      if (!view.get(JOBS, namespace, monitoringRoleJobName(instance.name, secretUid)))
        await write.apply(JOBS, monitoringRoleJob(instance, secretUid));
    }
    return undefined;
  },
};
