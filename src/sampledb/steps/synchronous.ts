// spec.replication.synchronous on the running instances: ask every pod what it runs with (and the primary who streams
// from it), let decideSynchronous choose, and set what it says by ALTER SYSTEM, standbys first. Runs after the
// replication step, so it sees the record as that step left it; a failed change is reported in the condition and
// tried again, it never stops the chain (the StatefulSet and the Jobs after it must still converge).
import type { V1Pod } from '@kubernetes/client-node';
import { REPLICATION_EVENT_REASONS } from '../../api/index.ts';
import { describeError } from '../../runtime/index.ts';
import { decodeSecretValue, PASSWORD_KEY } from '../credentials.ts';
import { podName, replicated, replicationNames, statefulSetReplicas } from '../replication/objects.ts';
import { decideSynchronous, type SynchronousAnswer } from '../replication/synchronous.ts';
import { askSynchronous, setSynchronous } from '../replication/synchronous-sql.ts';
import { PODS, SECRETS } from '../resources.ts';
import type { Step } from './context.ts';
import { sqlOptions } from './replication.ts';

/** After a change: look again soon, the condition follows what the servers run with. */
const AFTER_CHANGE_MS = 1000;

const runningIp = (pod: V1Pod | undefined) =>
  pod && !pod.metadata?.deletionTimestamp ? pod.status?.podIP : undefined;

export const keepSynchronousReplication: Step = {
  name: 'synchronous',
  writes: ['event'],
  async run({ instance, view, write, observed, log }) {
    if (!replicated(instance)) return undefined;
    const failover = view.get(SECRETS, instance.namespace, replicationNames(instance).failoverSecret);
    const password = decodeSecretValue(failover?.data?.[PASSWORD_KEY]);
    if (!password) return undefined;
    const primary = observed.replication?.primary ?? instance.object.status?.replication?.primary;
    const count = Math.max(statefulSetReplicas(instance), instance.spec.instances);
    const ips = new Map<string, string>();
    for (let ordinal = 0; ordinal < count; ordinal++) {
      const name = podName(instance, ordinal);
      const ip = runningIp(view.get(PODS, instance.namespace, name));
      if (ip) ips.set(name, ip);
    }
    const answered = await Promise.all(
      [...ips].map(async ([name, ip]) => [name, await askSynchronous(sqlOptions(ip, password))] as const),
    );
    const answers = new Map(
      answered.filter((a): a is readonly [string, SynchronousAnswer] => a[1] !== undefined),
    );
    const members = Array.from({ length: instance.spec.instances }, (_, i) => podName(instance, i));
    const decision = decideSynchronous({
      synchronous: instance.spec.replication.synchronous,
      members,
      ...(primary ? { primary } : {}),
      answers,
    });

    let condition = decision.condition;
    for (const change of decision.changes) {
      const ip = ips.get(change.pod);
      if (!ip) continue;
      try {
        await setSynchronous(sqlOptions(ip, password), change.setting, () =>
          write.assertMayWrite(`synchronous_standby_names on ${change.pod}`),
        );
      } catch (err) {
        log.warn({ pod: change.pod, err: describeError(err) }, 'setting synchronous_standby_names failed');
        condition = {
          ...condition,
          status: 'False',
          message: `${condition.message} Setting it on ${change.pod} failed: ${describeError(err)}.`,
        };
        break;
      }
      if (change.primary) {
        await write.event({
          regarding: instance.object,
          type: 'Normal',
          reason: REPLICATION_EVENT_REASONS.synchronousStandbysSet,
          action: 'Configure',
          note: `synchronous_standby_names on ${change.pod}: ${change.setting === '' ? "'' (asynchronous)" : change.setting}`,
        });
      }
    }
    return {
      conditions: [condition],
      ...(decision.changes.length > 0 ? { requeueAfterMs: AFTER_CHANGE_MS } : {}),
    };
  },
};
