// SampleDB status from what is observed in the cluster: pure, so every situation is a unit test.
//
// Conditions: Provisioned (the database pod runs and is ready), Initialized (the init Job succeeded), Configured
// (every postgresql parameter was applied) and Ready (clients can use it now). Reasons are CamelCase and stable;
// messages say what is wrong and what to do about it.
import type {
  V1ConfigMap,
  V1ContainerStatus,
  V1EndpointSlice,
  V1Job,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Secret,
  V1StatefulSet,
} from '@kubernetes/client-node';
import {
  CONTAINERS,
  type FieldError,
  type Phase,
  REASONS,
  SAMPLEDB_CONDITIONS,
  type SampleDbStatus,
} from '../api/index.ts';
import { type Condition, type ConditionInput, mergeConditions } from '../runtime/conditions.ts';
import { PASSWORD_KEY, readCredentials, USERNAME_KEY } from './credentials.ts';
import { endpointString, type SampleDbInstance } from './instance.ts';
import { postgresConfig } from './postgres-config.ts';
import { replicated } from './replication/objects.ts';
import { serviceRoutesTo, writesStopped } from './services.ts';

/** What the reconciler observed; anything absent was not found. */
export interface ObservedChildren {
  statefulSet?: V1StatefulSet;
  /** The database pod: the elected primary's (`SampleDbInstance.primary`), `<name>-0` without replicas. */
  pod?: V1Pod;
  dataPvc?: V1PersistentVolumeClaim;
  /** The client Service's EndpointSlices: whether it routes to the database pod yet. */
  clientEndpointSlices?: readonly V1EndpointSlice[];
  /** The superuser's Secret (always generated); read by the publish step, never published. */
  superuserSecret?: V1Secret;
  /** The credentials Secret (generated or the user's). */
  credentialsSecret?: V1Secret;
  /** The ConfigMap named by bootstrap.initSQL, when there is one. */
  initSqlConfigMap?: V1ConfigMap;
  initJob?: V1Job;
  /** Pods of the init Job, to quote why the last one failed. */
  initJobPods?: readonly V1Pod[];
  bindingSecret?: V1Secret;
  /** The apiserver refused a child object (422): its message, which the status and an Event carry. */
  rejectedChild?: string;
  /** The version the running server last reported (steps/version.ts). */
  serverVersion?: string;
  /** The spec's major differs from the data files': the StatefulSet keeps the image it has (upgrade/workload.ts). */
  heldMajor?: { fromMajor: number; toMajor: number; specImage: string };
  /** The major upgrade due or under way (steps/major-upgrade.ts). */
  majorUpgrade?: {
    plan: {
      step: string;
      failure?: string;
      backup?: string;
      workload: { image: string; replicas: number; dataMajor: number };
    };
    route: { fromMajor: number; toMajor: number };
    waitingUntil?: string;
    /** Which attempt at this upgrade runs, and the last retry-upgrade annotation value seen. */
    attempt?: number;
    retryRequest?: string;
  };
  /** spec.version went back before the recorded upgrade's Job: status.upgrade.step becomes Abandoned. */
  upgradeAbandoned?: boolean;
  /** A version change (minor rollout or major upgrade) is running: the phase is Upgrading. */
  upgrading?: boolean;
  /** status.migrations as the migrations step recorded it (steps/migrations.ts). */
  migrations?: readonly { name: string; checksum: string; appliedAt?: string }[];
  /** Problems with the spec found by the validator (objects that slipped past admission). */
  specErrors?: readonly FieldError[];
}

type Check =
  | { ok: true; reason: string; message: string }
  | { ok: false; reason: string; message: string; fatal?: boolean };

const ok = (reason: string, message: string): Check => ({ ok: true, reason, message });
const notYet = (reason: string, message: string): Check => ({ ok: false, reason, message });
const failed = (reason: string, message: string): Check => ({ ok: false, reason, message, fatal: true });

const hasKey = (secret: V1Secret | undefined, key: string) =>
  Boolean(secret?.data?.[key] ?? secret?.stringData?.[key]);

function checkCredentials(instance: SampleDbInstance, secret: V1Secret | undefined): Check | undefined {
  const name = instance.credentials.secretName;
  if (!secret) {
    return instance.credentials.generated
      ? notYet(REASONS.credentialsPending, `Creating the credentials Secret ${name}.`)
      : notYet(
          REASONS.credentialsSecretNotFound,
          `Secret ${name} (bootstrap.credentialsSecret) was not found: create it in this namespace with keys "username" and "password".`,
        );
  }
  const missing = [USERNAME_KEY, PASSWORD_KEY].filter((key) => !hasKey(secret, key));
  if (missing.length > 0) {
    return failed(
      REASONS.credentialsSecretInvalid,
      `Secret ${name} has no ${missing.map((k) => `"${k}"`).join(' or ')} key: add ${missing.length > 1 ? 'them' : 'it'} (non-empty).`,
    );
  }
  // The Secret is the owner's: a different username would be published in the binding for a role that is not it.
  const username = readCredentials(secret)?.username;
  const owner = instance.spec.bootstrap.owner;
  if (username !== undefined && username !== owner) {
    return failed(
      REASONS.credentialsSecretInvalid,
      `Secret ${name} has username "${username}", but bootstrap.owner is "${owner}": the Secret holds the owner's credentials, so set one to the other.`,
    );
  }
  return undefined;
}

function checkInitSql(instance: SampleDbInstance, configMap: V1ConfigMap | undefined): Check | undefined {
  const initSql = instance.spec.bootstrap.initSQL;
  if (!initSql) return undefined;
  if (!configMap) {
    return notYet(
      REASONS.initSqlNotFound,
      `ConfigMap ${initSql.name} (bootstrap.initSQL) was not found: create it with the SQL under key "${initSql.key}".`,
    );
  }
  if (configMap.data?.[initSql.key] === undefined) {
    return failed(
      REASONS.initSqlKeyNotFound,
      `ConfigMap ${initSql.name} has no key "${initSql.key}": add the SQL under that key, or set bootstrap.initSQL.key.`,
    );
  }
  return undefined;
}

const BROKEN_WAITING_REASONS: Record<string, string> = {
  ErrImagePull: 'the image cannot be pulled: check spec.version and spec.image',
  ImagePullBackOff: 'the image cannot be pulled: check spec.version and spec.image',
  InvalidImageName: 'the image name is invalid: check spec.image',
  CreateContainerConfigError: 'the container cannot be configured (often a missing Secret or ConfigMap key)',
  CrashLoopBackOff: 'PostgreSQL keeps crashing: check the pod log and spec.postgresql.parameters',
};

function lastTermination(status: V1ContainerStatus | undefined): string | undefined {
  const terminated = status?.state?.terminated ?? status?.lastState?.terminated;
  const text = terminated?.message?.trim() || terminated?.reason;
  return text ? text.slice(-1024) : undefined;
}

/** The server's own version, as the init Job's last successful run reported it ("server_version=15.8"). */
export function reportedServerVersion(initJobPods: readonly V1Pod[] | undefined): string | undefined {
  for (const pod of initJobPods ?? []) {
    const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
    if (terminated?.exitCode !== 0) continue;
    const version = /^server_version=(\d+(?:\.\d+)*)\s*$/m.exec(terminated.message ?? '')?.[1];
    if (version) return version;
  }
  return undefined;
}

function checkDatabasePod(instance: SampleDbInstance, observed: ObservedChildren): Check {
  const { names, primary } = instance;
  const sts = observed.statefulSet;
  if (!sts) return notYet(REASONS.statefulSetPending, `Creating StatefulSet ${names.statefulSet}.`);
  // With replicas, a Ready replica is not a usable database: only the elected primary's readiness counts.
  const ready = replicated(instance)
    ? (observed.pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false)
    : (sts.status?.readyReplicas ?? 0) >= 1;
  if (ready) {
    // While a restore has stopped writes the client Service selects nothing on purpose (the restore says so).
    const routed =
      writesStopped(instance) || !observed.pod
        ? undefined
        : serviceRoutesTo(observed.clientEndpointSlices ?? [], observed.pod);
    if (routed === false) {
      return notYet(
        REASONS.serviceNotRouting,
        `PostgreSQL in pod ${primary.pod} is ready; Service ${names.clientService} does not route to it yet (its EndpointSlice does not list the pod as ready).`,
      );
    }
    return ok(REASONS.databaseReady, `PostgreSQL in pod ${primary.pod} is accepting connections.`);
  }
  const pvcPhase = observed.dataPvc?.status?.phase;
  if (observed.dataPvc && pvcPhase !== 'Bound') {
    return notYet(
      REASONS.volumePending,
      `PersistentVolumeClaim ${primary.dataPvc} is ${pvcPhase ?? 'not bound'}: check spec.storage.storageClassName and that the cluster can provision volumes (kubectl describe pvc ${primary.dataPvc}).`,
    );
  }
  const pod = observed.pod;
  if (!pod) return notYet(REASONS.podPending, `Waiting for pod ${primary.pod} to be created.`);
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') {
    return notYet(
      REASONS.unschedulable,
      `Pod ${primary.pod} cannot be scheduled: ${scheduled.message ?? scheduled.reason ?? 'no node fits'}. Lower spec.resources or add capacity.`,
    );
  }
  const container =
    pod.status?.containerStatuses?.find((c) => c.name === CONTAINERS.postgres) ??
    pod.status?.containerStatuses?.[0];
  const waiting = container?.state?.waiting?.reason;
  if (waiting && BROKEN_WAITING_REASONS[waiting]) {
    const detail = container?.state?.waiting?.message ?? lastTermination(container);
    return failed(
      waiting,
      `Pod ${primary.pod}: ${BROKEN_WAITING_REASONS[waiting]}.${detail ? ` ${detail}` : ''}`,
    );
  }
  return notYet(
    REASONS.podNotReady,
    `Pod ${primary.pod} is starting; PostgreSQL is not accepting connections yet.`,
  );
}

function jobCondition(job: V1Job, type: string) {
  return job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
}

function checkInitJob(instance: SampleDbInstance, observed: ObservedChildren): Check {
  const name = instance.names.initJob;
  const job = observed.initJob;
  if (!job)
    return notYet(REASONS.initJobPending, `Job ${name} will initialize the database once it is provisioned.`);
  if (jobCondition(job, 'Complete') || (job.status?.succeeded ?? 0) > 0) {
    return ok(REASONS.initJobSucceeded, `Job ${name} created the role and database and ran the bootstrap.`);
  }
  const failure = jobCondition(job, 'Failed');
  if (failure) {
    const podMessage = [...(observed.initJobPods ?? [])]
      .sort((a, b) =>
        String(a.metadata?.creationTimestamp ?? '').localeCompare(
          String(b.metadata?.creationTimestamp ?? ''),
        ),
      )
      .map((pod) => lastTermination(pod.status?.containerStatuses?.[0]))
      .filter((m) => m !== undefined)
      .at(-1);
    return failed(
      REASONS.initJobFailed,
      `Job ${name} failed (${failure.reason ?? 'Failed'}${failure.message ? `: ${failure.message}` : ''})` +
        `${podMessage ? `; last error: ${podMessage}` : ''}. Fix the cause (bootstrap SQL, credentials), then delete Job ${name} to retry.`,
    );
  }
  return notYet(REASONS.initializing, `Job ${name} is initializing the database.`);
}

function majorUpgradeRunning(observed: ObservedChildren): boolean {
  const step = observed.majorUpgrade?.plan.step;
  return step !== undefined && step !== 'Done' && step !== 'Failed';
}

function upgradeStatus({
  plan,
  route,
  waitingUntil,
  attempt,
  retryRequest,
}: NonNullable<ObservedChildren['majorUpgrade']>) {
  return {
    ...(waitingUntil ? { waitingUntil } : {}),
    fromMajor: route.fromMajor,
    toMajor: route.toMajor,
    step: plan.step,
    ...(attempt ? { attempt } : {}),
    ...(retryRequest !== undefined ? { retryRequest } : {}),
    ...(plan.backup ? { backup: plan.backup } : {}),
    ...(plan.failure ? { message: plan.failure } : {}),
  };
}

/** A spec change the StatefulSet controller has not finished rolling out. */
function rolloutInProgress(sts: V1StatefulSet | undefined): boolean {
  if (!sts) return false;
  const status = sts.status;
  if ((status?.observedGeneration ?? 0) < (sts.metadata?.generation ?? 0)) return true;
  if (status?.updateRevision && status.currentRevision && status.updateRevision !== status.currentRevision)
    return true;
  return (status?.updatedReplicas ?? 1) < (sts.spec?.replicas ?? 1);
}

const toInput = (type: string, check: Check, generation: number | undefined): ConditionInput => ({
  type,
  status: check.ok ? 'True' : 'False',
  reason: check.reason,
  message: check.message,
  ...(generation !== undefined ? { observedGeneration: generation } : {}),
});

export function sampleDbStatus(
  instance: SampleDbInstance,
  observed: ObservedChildren,
  now: Date = new Date(),
): SampleDbStatus {
  const db = instance.object;
  const generation = db.metadata.generation;
  const previous = (db.status?.conditions ?? []) as Condition[];
  const base = { observedGeneration: generation, endpoint: endpointString(instance) };

  if (observed.specErrors && observed.specErrors.length > 0) {
    const message = `The spec is invalid: ${observed.specErrors.map((e) => `${e.field}: ${e.message}`).join('; ')}. Fix the SampleDB spec.`;
    const invalid = failed(REASONS.invalidSpec, message);
    return {
      ...db.status,
      ...base,
      phase: 'Failed',
      conditions: mergeConditions(previous, [toInput(SAMPLEDB_CONDITIONS.ready, invalid, generation)], now),
    };
  }

  if (observed.rejectedChild) {
    const refused = failed(
      REASONS.childRejected,
      `The apiserver refused a child object: ${observed.rejectedChild.slice(0, 1024)}. Fix the SampleDB spec; the operator retries with a growing delay.`,
    );
    return {
      ...db.status,
      ...base,
      phase: 'Failed',
      conditions: mergeConditions(previous, [toInput(SAMPLEDB_CONDITIONS.ready, refused, generation)], now),
    };
  }

  const { spec } = instance;
  const rejected = postgresConfig(spec).rejected;
  const configured =
    rejected.length === 0
      ? ok(REASONS.parametersApplied, 'All spec.postgresql.parameters are applied.')
      : notYet(
          REASONS.parametersRejected,
          `Not applied: ${rejected.map((r) => `${r.name} (${r.reason})`).join(', ')}. Remove or fix them in spec.postgresql.parameters.`,
        );

  const inputProblem =
    checkCredentials(instance, observed.credentialsSecret) ??
    checkInitSql(instance, observed.initSqlConfigMap);
  const provisioned = inputProblem ?? checkDatabasePod(instance, observed);
  const initialized = inputProblem ?? checkInitJob(instance, observed);
  const updating = provisioned.ok && initialized.ok && rolloutInProgress(observed.statefulSet);
  const deleting = Boolean(db.metadata.deletionTimestamp);

  let ready: Check;
  if (deleting) ready = notYet(REASONS.deleting, 'The SampleDB is being deleted.');
  else if (!provisioned.ok) ready = provisioned;
  else if (!initialized.ok) ready = initialized;
  else if (updating)
    ready = notYet(
      REASONS.rollingOut,
      'A spec change is rolling out; the pod restarts with the new settings.',
    );
  else ready = ok(REASONS.ready, `PostgreSQL accepts connections at ${endpointString(instance)}.`);

  let phase: Phase;
  if (deleting) phase = 'Deleting';
  else if ((!provisioned.ok && provisioned.fatal) || (!initialized.ok && initialized.fatal)) phase = 'Failed';
  else if (observed.upgrading || majorUpgradeRunning(observed)) phase = 'Upgrading';
  else if (ready.ok) phase = 'Ready';
  else if (updating) phase = 'Updating';
  else if (inputProblem || !observed.statefulSet) phase = 'Pending';
  else phase = 'Provisioning';

  const conditions = mergeConditions(
    previous,
    [
      toInput(SAMPLEDB_CONDITIONS.ready, ready, generation),
      toInput(SAMPLEDB_CONDITIONS.provisioned, provisioned, generation),
      toInput(SAMPLEDB_CONDITIONS.initialized, initialized, generation),
      toInput(SAMPLEDB_CONDITIONS.configured, configured, generation),
    ],
    now,
  );
  return {
    ...db.status,
    ...base,
    phase,
    conditions,
    // What the server reported (a version Job, or the init Job for the first image); never a copy of the spec.
    ...((observed.serverVersion ?? reportedServerVersion(observed.initJobPods))
      ? { currentVersion: observed.serverVersion ?? reportedServerVersion(observed.initJobPods) }
      : {}),
    ...(observed.bindingSecret ? { binding: { name: instance.names.bindingSecret } } : {}),
    ...(observed.majorUpgrade ? { upgrade: upgradeStatus(observed.majorUpgrade) } : {}),
    ...(!observed.majorUpgrade && observed.upgradeAbandoned && db.status?.upgrade
      ? { upgrade: { ...db.status.upgrade, step: 'Abandoned' } }
      : {}),
    ...(observed.migrations ? { migrations: [...observed.migrations] } : {}),
  };
}
