// spec.instances > 1: the role Secrets, the -ro Service, the roles Job, and the election (docs/adr/0008): observe
// every instance (pod from the cache, SQL to its IP as sampledb_failover), let the pure planner choose the next
// action, carry it out, and observe again, a few actions per reconcile, so a failover does not wait on watch events.
// Every action is checked against the record's term before it is carried out; a new term is committed with a status
// patch guarded by the SampleDB's resourceVersion.
import type { V1Pod, V1Secret } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  type InstanceStatus,
  LABELS,
  POSTGRES_PORT,
  REJOIN_AFTER_SECONDS,
  REPLICATION_EVENT_REASONS,
  type ReplicationStatus,
  type SampleDbObject,
} from '../../api/index.ts';
import type { Stored } from '../../runtime/index.ts';
import { decodeSecretValue, PASSWORD_KEY } from '../credentials.ts';
import { askInstance, FAILOVER_ROLE, promoteInstance } from '../failover/instance-sql.ts';
import type { PgConnectOptions } from '../failover/pg-client.ts';
import {
  type ElectionRecord,
  formatLsn,
  type MemberObservation,
  parseLsn,
  planReplication,
  type ReplicationAction,
  type ReplicationObservation,
  stillCurrent,
} from '../failover/plan.ts';
import type { SampleDbInstance } from '../instance.ts';
import {
  electionConfigMap,
  failoverSecret,
  podName,
  readOnlyService,
  replicated,
  replicationNames,
  replicationSecret,
  statefulSetReplicas,
} from '../replication/objects.ts';
import { replicationRolesJob, replicationRolesJobName } from '../replication/roles-job.ts';
import { instancesStatus, isoSeconds, replicationConditions } from '../replication/status.ts';
import { CONFIGMAPS, JOBS, PODS, PVCS, SAMPLEDBS, SECRETS, SERVICES, STATEFULSETS } from '../resources.ts';
import { upgradingToOf } from '../upgrade/workload.ts';
import type { ClusterView } from '../view.ts';
import type { Writer } from '../writer.ts';
import { halt, type Step } from './context.ts';

const SQL_TIMEOUT_MS = 1000;
const ACTIONS_PER_RECONCILE = 8;
/** How often a steady SampleDB is asked again: a primary that hangs without its pod changing is noticed so. */
const STEADY_RECHECK_MS = 2000;
/**
 * How long a switchover may keep the writes stopped before it is aborted: the old primary's pod stops and comes back
 * as a standby in a few seconds on the real node; a target that has not received its final WAL by then will not.
 */
export const SWITCHOVER_TIMEOUT_MS = 60_000;

/** The record as stored in status.replication. */
export function recordOf(db: SampleDbObject): ElectionRecord {
  const stored = db.status?.replication;
  const since = stored?.primaryUnavailableSince ? new Date(stored.primaryUnavailableSince) : undefined;
  const handover = stored?.handover;
  return {
    ...(stored?.primary ? { primary: stored.primary } : {}),
    term: stored?.term ?? 0,
    ...(since ? { primaryUnavailableSince: since } : {}),
    ...(handover
      ? {
          handover: {
            from: handover.from,
            reason: handover.reason,
            ...(handover.lsn ? { lsn: parseLsn(handover.lsn) } : {}),
          },
        }
      : {}),
  };
}

function storedRecord(record: ElectionRecord, instances: InstanceStatus[]): ReplicationStatus {
  const { handover } = record;
  return {
    ...(record.primary ? { primary: record.primary } : {}),
    term: record.term,
    ...(record.primaryUnavailableSince
      ? { primaryUnavailableSince: isoSeconds(record.primaryUnavailableSince) }
      : {}),
    ...(handover
      ? {
          handover: {
            from: handover.from,
            // The stored enum names the two reasons users see; a scale down is a switchover.
            reason: handover.reason === 'Failover' ? 'Failover' : 'Switchover',
            ...(handover.lsn !== undefined ? { lsn: formatLsn(handover.lsn) } : {}),
          },
        }
      : {}),
    instances,
  };
}

/** How the operator reaches an instance: its pod IP, as sampledb_failover. */
export const sqlOptions = (host: string, password: string): PgConnectOptions => ({
  host,
  port: POSTGRES_PORT,
  user: FAILOVER_ROLE,
  password,
  database: 'postgres',
  timeoutMs: SQL_TIMEOUT_MS,
});

const podState = (pod: V1Pod | undefined) =>
  !pod ? 'absent' : pod.metadata?.deletionTimestamp ? 'terminating' : 'running';
const podReady = (pod: V1Pod | undefined) =>
  pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function observeMembers(
  instance: SampleDbInstance,
  view: ClusterView,
  password: string | undefined,
  previous: readonly InstanceStatus[],
): Promise<{ members: MemberObservation[]; pods: Map<string, V1Pod> }> {
  const count = Math.max(statefulSetReplicas(instance), instance.spec.instances);
  const pods = new Map<string, V1Pod>();
  // When each standby was first seen not streaming, as the last status recorded it: survives an operator restart.
  const since = (name: string) => {
    const text = previous.find((i) => i.name === name)?.notStreamingSince;
    const date = text ? new Date(text) : undefined;
    return date && !Number.isNaN(date.getTime()) ? date : undefined;
  };
  const members = await Promise.all(
    Array.from({ length: count }, async (_, ordinal): Promise<MemberObservation> => {
      const name = podName(instance, ordinal);
      const pod = view.get(PODS, instance.namespace, name);
      if (pod) pods.set(name, pod);
      const state = podState(pod);
      const ip = pod?.status?.podIP;
      const role = pod?.metadata?.labels?.[LABELS.role];
      const term = Number(pod?.metadata?.annotations?.[ANNOTATIONS.term]);
      const sql =
        state === 'running' && ip && password ? await askInstance(sqlOptions(ip, password)) : undefined;
      const notStreamingSince = sql?.inRecovery && !sql.streaming ? since(name) : undefined;
      return {
        name,
        ordinal,
        pod: state,
        ready: podReady(pod),
        ...(role === 'primary' || role === 'replica' ? { roleLabel: role } : {}),
        ...(Number.isInteger(term) ? { termLabel: term } : {}),
        ...(sql ? { sql } : {}),
        ...(notStreamingSince ? { notStreamingSince } : {}),
      };
    }),
  );
  return { members, pods };
}

async function ensureSecret(
  view: ClusterView,
  write: Writer,
  desired: V1Secret,
): Promise<Stored<V1Secret> | undefined> {
  const existing = view.get(SECRETS, desired.metadata?.namespace ?? '', desired.metadata?.name ?? '');
  if (existing?.data?.[PASSWORD_KEY]) return existing;
  return existing ? write.apply(SECRETS, desired) : write.createOnce(SECRETS, desired);
}

/**
 * Removes fields of the stored record, in the term the action was planned for (the test op is the fencing token).
 * Needed because the election wrote the record with a JSON patch: the status apply at the end of the reconcile
 * does not own those fields, so leaving them out of it would not remove them.
 */
async function removeFromRecord(
  db: Stored<SampleDbObject>,
  term: number,
  fields: readonly (keyof ReplicationStatus)[],
  write: Writer,
): Promise<Stored<SampleDbObject> | undefined> {
  const stored = db.status?.replication;
  const present = fields.filter((f) => stored?.[f] !== undefined);
  if (present.length === 0) return undefined;
  const name = db.metadata.name ?? '';
  const ops = [
    { op: 'test', path: '/status/replication/term', value: term },
    ...present.map((f) => ({ op: 'remove', path: `/status/replication/${f}` })),
  ];
  return write.guardedPatchStatus(SAMPLEDBS, { namespace: db.metadata.namespace ?? '', name }, ops);
}

interface Executed {
  record: ElectionRecord;
  sampleDb?: Stored<SampleDbObject>;
}

async function execute(
  instance: SampleDbInstance,
  db: Stored<SampleDbObject>,
  action: ReplicationAction,
  record: ElectionRecord,
  pods: Map<string, V1Pod>,
  password: string,
  write: Writer,
): Promise<Executed> {
  if (!stillCurrent(action, record))
    throw new Error(`stale action for term ${action.term}: the record is at ${record.term}`);
  const event = (type: 'Normal' | 'Warning', reason: string, note: string) =>
    write.event({ regarding: db, type, reason, action: 'Elect', note });
  const ref = (pod: string) => ({ namespace: instance.namespace, name: pod });
  switch (action.kind) {
    case 'elect': {
      const next: ElectionRecord = {
        primary: action.primary,
        term: action.term,
        ...(action.handover ? { handover: action.handover } : {}),
      };
      const value = storedRecord(next, db.status?.replication?.instances ?? []);
      const ops = [
        { op: 'test', path: '/metadata/resourceVersion', value: db.metadata.resourceVersion },
        db.status
          ? { op: 'add', path: '/status/replication', value }
          : { op: 'add', path: '/status', value: { replication: value } },
      ];
      const written = await write.guardedPatchStatus(SAMPLEDBS, ref(instance.name), ops);
      const from = action.handover ? `, replacing ${action.handover.from}` : '';
      if (action.reason === 'SwitchoverAborted') {
        await event(
          'Warning',
          REPLICATION_EVENT_REASONS.switchoverAborted,
          `switchover to ${record.primary} aborted in term ${action.term}: ${action.why ?? 'timed out'}`,
        );
      }
      await event(
        'Normal',
        REPLICATION_EVENT_REASONS.primaryElected,
        `term ${action.term}: ${action.primary} (${action.reason}${from})`,
      );
      return { record: next, sampleDb: written };
    }
    case 'publish':
      await write.apply(CONFIGMAPS, electionConfigMap(instance, action.primary, action.term));
      return { record };
    case 'fence':
      await write.patch(
        PODS,
        ref(action.pod),
        { metadata: { labels: { [LABELS.role]: null } } },
        { ifMissing: 'skip' },
      );
      if (action.deletePod) await write.delete(PODS, ref(action.pod));
      await event(
        'Warning',
        REPLICATION_EVENT_REASONS.primaryFenced,
        `${action.pod} fenced in term ${action.term}: ${action.why}`,
      );
      return { record };
    case 'mark-unavailable':
      return { record: { ...record, primaryUnavailableSince: action.since } };
    case 'clear-unavailable': {
      const { primaryUnavailableSince: _, ...rest } = record;
      return {
        record: rest,
        sampleDb: await removeFromRecord(db, action.term, ['primaryUnavailableSince'], write),
      };
    }
    case 'promote': {
      const ip = pods.get(action.pod)?.status?.podIP;
      if (!ip) throw new Error(`pod ${action.pod} has no IP to promote`);
      await promoteInstance(sqlOptions(ip, password), () =>
        write.assertMayWrite(`pg_promote on ${action.pod}`),
      );
      await event(
        'Normal',
        REPLICATION_EVENT_REASONS.primaryPromoted,
        `${action.pod} promoted in term ${action.term}`,
      );
      return { record };
    }
    case 'complete-handover': {
      const { handover: _, primaryUnavailableSince: __, ...rest } = record;
      return {
        record: rest,
        sampleDb: await removeFromRecord(db, action.term, ['handover', 'primaryUnavailableSince'], write),
      };
    }
    case 'label':
      await write.patch(PODS, ref(action.pod), {
        metadata: {
          labels: { [LABELS.role]: action.role },
          annotations: { [ANNOTATIONS.term]: String(action.term) },
        },
      });
      return { record };
    case 'rejoin': {
      // A fresh clone: the claim goes (it waits for its pod), then the pod; the StatefulSet recreates both.
      const ordinal = action.pod.slice(instance.names.statefulSet.length + 1);
      await write.delete(
        PVCS,
        ref(`${instance.names.dataVolumeClaimTemplate}-${instance.names.statefulSet}-${ordinal}`),
      );
      await write.delete(PODS, ref(action.pod));
      await event(
        'Warning',
        REPLICATION_EVENT_REASONS.instanceRejoined,
        `${action.pod} re-cloned: ${action.why}`,
      );
      return { record };
    }
    // Done, or aborted (removed first, so the next plan elects the old primary back instead of starting the same
    // switchover again). Only the value this plan saw: a newer request set meanwhile stays.
    case 'clear-switchover':
    case 'abort-switchover': {
      const path = `/metadata/annotations/${ANNOTATIONS.switchoverTo.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      const written = await write.guardedPatch(SAMPLEDBS, ref(instance.name), [
        { op: 'test', path, value: action.target },
        { op: 'remove', path },
      ]);
      return { record, ...(written ? { sampleDb: written } : {}) };
    }
    case 'refuse-switchover':
      await event(
        'Warning',
        REPLICATION_EVENT_REASONS.switchoverRefused,
        `switchover to ${action.target} refused: ${action.why}`,
      );
      return { record };
    case 'wait':
    case 'steady':
      return { record };
  }
}

export const reconcileReplication: Step = {
  name: 'replication',
  writes: ['create-once', 'apply', 'patch', 'delete', 'guarded-patch', 'event'],
  async run({ instance, view, write, now, observed }) {
    if (!replicated(instance)) return undefined;
    const names = replicationNames(instance);
    const replicationCreds = await ensureSecret(
      view,
      write,
      replicationSecret(instance, view.get(SECRETS, instance.namespace, names.replicationSecret)),
    );
    const failoverCreds = await ensureSecret(
      view,
      write,
      failoverSecret(instance, view.get(SECRETS, instance.namespace, names.failoverSecret)),
    );
    // Created by an earlier run the cache has not shown yet: never overwrite them, wait for the watch.
    if (!replicationCreds || !failoverCreds) return halt(1000);
    await write.apply(SERVICES, readOnlyService(instance));
    const initJob = view.get(JOBS, instance.namespace, instance.names.initJob);
    const uids = [replicationCreds.metadata.uid ?? '', failoverCreds.metadata.uid ?? ''];
    if (
      (initJob?.status?.succeeded ?? 0) > 0 &&
      !view.get(JOBS, instance.namespace, replicationRolesJobName(instance, uids))
    ) {
      await write.apply(JOBS, replicationRolesJob(instance, uids));
    }
    const password = decodeSecretValue(failoverCreds.data?.[PASSWORD_KEY]) ?? '';

    let db = (observed.sampleDb ?? instance.object) as Stored<SampleDbObject>;
    let record = recordOf(db);
    const published = view.get(CONFIGMAPS, instance.namespace, names.electionConfigMap)?.data;
    // The primary may be published as NOBODY ('') while the recorded one goes away: the term says it was published.
    let publishedRecord =
      published?.term !== undefined
        ? { primary: published.primary ?? '', term: Number(published.term) }
        : undefined;
    // From the moment a major upgrade takes the files offline until it is done or rolled back (the StatefulSet
    // records it), the upgrade owns the pods: pod 0 runs alone, stopped and started on purpose.
    const upgradingTo = upgradingToOf(view.get(STATEFULSETS, instance.namespace, instance.names.statefulSet));
    const paused =
      upgradingTo === undefined
        ? undefined
        : `a major upgrade to PostgreSQL ${upgradingTo} runs ${instance.names.pod} alone; elections wait until it ends`;
    let last: { action: ReplicationAction; members: MemberObservation[] } | undefined;
    for (let i = 0; i < ACTIONS_PER_RECONCILE; i++) {
      const { members, pods } = await observeMembers(
        instance,
        view,
        password,
        db.status?.replication?.instances ?? [],
      );
      const obs: ReplicationObservation = {
        instances: instance.spec.instances,
        failoverDelayMs: instance.spec.replication.failoverDelaySeconds * 1000,
        rejoinAfterMs: REJOIN_AFTER_SECONDS * 1000,
        switchoverTimeoutMs: SWITCHOVER_TIMEOUT_MS,
        ...(paused ? { paused } : {}),
        record,
        ...(publishedRecord ? { published: publishedRecord } : {}),
        members,
        ...(db.metadata.annotations?.[ANNOTATIONS.switchoverTo]
          ? { switchoverTo: db.metadata.annotations[ANNOTATIONS.switchoverTo] }
          : {}),
        now: now(),
      };
      const { next } = planReplication(obs);
      last = { action: next, members };
      const done = await execute(instance, db, next, record, pods, password, write);
      record = done.record;
      if (done.sampleDb) db = done.sampleDb;
      if (next.kind === 'publish') publishedRecord = { primary: next.primary, term: next.term };
      if (['wait', 'steady', 'refuse-switchover', 'clear-switchover'].includes(next.kind)) break;
    }
    if (!last) return undefined;
    const { action, members } = last;
    const replication = storedRecord(record, instancesStatus(record, members, now()));
    const requeueAfterMs =
      action.kind === 'steady'
        ? STEADY_RECHECK_MS
        : action.kind === 'wait'
          ? (action.retryInMs ?? 1000)
          : 200;
    return {
      observed: { sampleDb: db, replication },
      conditions: replicationConditions(record, members, action),
      requeueAfterMs,
    };
  },
};
