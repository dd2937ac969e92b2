// The monitoring Secret (spec.monitoring.exporter): created once before the StatefulSet and the init Job read it,
// never re-applied while it holds a password (the role in the database has that one).
import type { V1Secret } from '@kubernetes/client-node';
import { isStatus } from '../../runtime/index.ts';
import { monitoringSecret, monitoringSecretName } from '../exporter.ts';
import { SECRETS } from '../resources.ts';
import { halt, type Step } from './context.ts';

export const ensureMonitoringSecret: Step = {
  name: 'monitoring-secret',
  async run(ctx) {
    const { db, namespace, view, client } = ctx;
    const existing = view.get<V1Secret & { metadata: object }>(SECRETS, namespace, monitoringSecretName(db));
    const desired = monitoringSecret(db, existing);
    if (!desired) return undefined;
    if (!existing) {
      try {
        await client.create(SECRETS, desired as never);
      } catch (err) {
        // Created by an earlier run the cache has not shown yet: never overwrite it, wait for the watch.
        if (isStatus(err, 409)) return halt(1000);
        throw err;
      }
    } else if (!existing.data?.password) {
      await client.apply(SECRETS, desired as never);
    }
    return undefined;
  },
};
