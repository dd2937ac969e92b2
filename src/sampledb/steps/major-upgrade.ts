// The major upgrade in the reconcile: builds the observation plan.ts decides on (the backup, the StatefulSet and its
// pod, the upgrade's Jobs, the version Job of the new image), carries out the one action it returns, and hands the
// StatefulSet it wants to the workload step. Runs only while an upgrade is due or under way.
import type { V1Job, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { ANNOTATIONS, EVENT_REASONS, majorVersion, REASONS, SAMPLEDB_CONDITIONS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';
import { replicated, statefulSetReplicas } from '../replication/objects.ts';
import { JOBS, PODS, SAMPLEDB_BACKUPS, SAMPLEDBS, STATEFULSETS } from '../resources.ts';
import { preUpgradeBackup, type UpgradeRoute, upgradeJob, upgradeJobName } from '../upgrade/jobs.ts';
import {
  currentAttempt,
  type JobState,
  planUpgrade,
  preUpgradeBackupName,
  retryWanted,
  type UpgradeObservation,
  type UpgradePlan,
  type UpgradeRecord,
} from '../upgrade/plan.ts';
import { reportOf } from '../upgrade/version.ts';
import { windowState } from '../upgrade/window.ts';
import { templateImage, upgradingToOf, workloadVersion } from '../upgrade/workload.ts';
import { runningImage, versionJob, versionJobName } from '../version-job.ts';
import type { Step, StepContext } from './context.ts';

/**
 * A failed container's termination message for a condition, at most `limit` characters: its first line (the scripts
 * put there what failed, e.g. the pg_upgrade checks and offending columns) whole up to half the limit, then as much
 * of the end of the rest as fits.
 */
export function terminationSummary(message: string, limit = 1024): string {
  const text = message.trim();
  if (text.length <= limit) return text;
  const newline = text.indexOf('\n');
  const first = (newline < 0 ? text : text.slice(0, newline)).slice(0, Math.floor(limit / 2)).trimEnd();
  const rest = newline < 0 ? '' : text.slice(newline + 1);
  const room = limit - first.length - 5;
  return room > 0 && rest ? `${first}\n... ${rest.slice(-room).trimStart()}` : first;
}

function lastError(pods: readonly V1Pod[]): string | undefined {
  const message = pods
    .flatMap((p) => [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])])
    .map((c) => c.state?.terminated)
    .filter((t) => t && t.exitCode !== 0)
    .map((t) => (t?.message?.trim() || t?.reason) ?? '')
    .filter(Boolean)
    .at(-1);
  return message === undefined ? undefined : terminationSummary(message);
}

export function jobState(job: V1Job | undefined, pods: readonly V1Pod[]): JobState | undefined {
  if (!job) return undefined;
  if ((job.status?.succeeded ?? 0) > 0) {
    const completedAt = job.status?.completionTime;
    return completedAt
      ? { state: 'succeeded', completedAt: new Date(completedAt as unknown as string).toISOString() }
      : { state: 'succeeded' };
  }
  const failed = job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  if (failed)
    return { state: 'failed', message: lastError(pods) ?? failed.message ?? failed.reason ?? 'failed' };
  return { state: 'running' };
}

/**
 * The upgrade whose Job has touched the data files and that has not ended (the StatefulSet records its target until
 * Done or rollback), whatever the spec asks now: an older server cannot run converted files, and a half-done upgrade
 * is carried through to its end. From the upgrade Job, which carries where it started and runs the new image.
 */
export function upgradeUnderWay(
  existing: V1StatefulSet | undefined,
  jobOf: (toMajor: number) => V1Job | undefined,
): UpgradeRoute | undefined {
  const toMajor = upgradingToOf(existing);
  if (toMajor === undefined) return undefined;
  const job = jobOf(toMajor);
  const annotations = job?.metadata?.annotations ?? {};
  const fromImage = annotations[ANNOTATIONS.fromImage];
  const toImage = job?.spec?.template.spec?.containers[0]?.image;
  const fromMajor = Number.parseInt(annotations[ANNOTATIONS.fromMajor] ?? '', 10);
  if (!fromImage || !toImage || Number.isNaN(fromMajor)) return undefined;
  return { fromMajor, toMajor, fromImage, toImage };
}

/**
 * An upgrade the spec moved away from after the files went offline (the StatefulSet records its target) and before
 * its upgrade Job existed, while its preflight Job still reads the files: the route of that upgrade, so the old
 * server stays down until the preflight is gone. Undefined otherwise (then nothing holds the old server).
 */
export function abandonedPreflight({ instance, view }: StepContext): UpgradeRoute | undefined {
  const { namespace, names } = instance;
  const toMajor = upgradingToOf(view.get(STATEFULSETS, namespace, names.statefulSet));
  if (toMajor === undefined || toMajor === majorVersion(instance.spec.version)) return undefined;
  const attempt = currentAttempt(upgradeRecord(instance.object), toMajor);
  if (view.get(JOBS, namespace, upgradeJobName(instance.name, toMajor, 'upgrade', attempt))) return undefined;
  const preflight = view.get(JOBS, namespace, upgradeJobName(instance.name, toMajor, 'preflight', attempt));
  if (!preflight) return undefined;
  const pods = view.ownedBy(PODS, preflight.metadata.uid);
  const reading =
    jobState(preflight, pods)?.state === 'running' ||
    pods.some((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  const annotations = preflight.metadata.annotations ?? {};
  const fromImage = annotations[ANNOTATIONS.fromImage];
  const toImage = preflight.spec?.template.spec?.containers[0]?.image;
  const fromMajor = Number.parseInt(annotations[ANNOTATIONS.fromMajor] ?? '', 10);
  if (!reading || !fromImage || !toImage || Number.isNaN(fromMajor)) return undefined;
  return { fromMajor, toMajor, fromImage, toImage, attempt };
}

/** status.upgrade as the last reconcile wrote it: which attempt the objects are named for, the request acted on. */
function upgradeRecord(db: StepContext['instance']['object']): UpgradeRecord | undefined {
  const recorded = db.status?.upgrade;
  if (!recorded) return undefined;
  return {
    toMajor: recorded.toMajor,
    step: recorded.step,
    ...(recorded.attempt ? { attempt: recorded.attempt } : {}),
    ...(recorded.retryRequest !== undefined ? { retryRequest: recorded.retryRequest } : {}),
  };
}

/** The route of the upgrade due or under way, if any: from the Jobs once they exist, else from the hold. */
function routeOf(
  { instance, view }: StepContext,
  attemptOf: (toMajor: number) => number,
): UpgradeRoute | undefined {
  const { namespace, names, spec } = instance;
  const toMajor = majorVersion(spec.version);
  const attempt = attemptOf(toMajor);
  const existing = view.get(STATEFULSETS, namespace, names.statefulSet);
  const underWay = upgradeUnderWay(existing, (major) =>
    view.get(JOBS, namespace, upgradeJobName(instance.name, major, 'upgrade', attemptOf(major))),
  );
  if (underWay && underWay.toMajor !== toMajor) return { ...underWay, attempt: attemptOf(underWay.toMajor) };
  const recorded = [
    view.get(JOBS, namespace, upgradeJobName(instance.name, toMajor, 'preflight', attempt)),
    view.get(SAMPLEDB_BACKUPS, namespace, preUpgradeBackupName(instance.name, toMajor, attempt)),
  ].find((o) => o?.metadata.annotations?.[ANNOTATIONS.fromImage]);
  if (recorded) {
    const annotations = recorded.metadata.annotations ?? {};
    return {
      fromMajor: Number(annotations[ANNOTATIONS.fromMajor]),
      toMajor,
      fromImage: annotations[ANNOTATIONS.fromImage] as string,
      toImage: spec.image,
      attempt,
    };
  }
  const held = workloadVersion(instance, existing).held;
  const fromImage = templateImage(existing);
  if (!held || held.toMajor < held.fromMajor || !fromImage) return undefined;
  return { fromMajor: held.fromMajor, toMajor, fromImage, toImage: spec.image, attempt };
}

function observe(ctx: StepContext, route: UpgradeRoute): UpgradeObservation {
  const { instance, view, now } = ctx;
  const { namespace, names } = instance;
  const sts = view.get(STATEFULSETS, namespace, names.statefulSet);
  const pod = view.get(PODS, namespace, names.pod);
  // Any pod of the StatefulSet, replicas included: the files go offline only once every server has stopped.
  const anyPod =
    Boolean(pod) || (sts?.metadata?.uid ? view.ownedBy(PODS, sts.metadata.uid).length > 0 : false);
  const job = (mode: 'preflight' | 'upgrade' | 'rollback' | 'cleanup') => {
    const found = view.get(
      JOBS,
      namespace,
      upgradeJobName(instance.name, route.toMajor, mode, route.attempt),
    );
    return { found, state: jobState(found, found ? view.ownedBy(PODS, found.metadata.uid) : []) };
  };
  const backupName = preUpgradeBackupName(instance.name, route.toMajor, route.attempt);
  const backup = view.get(SAMPLEDB_BACKUPS, namespace, backupName);
  const verifyJob = view.get(JOBS, namespace, versionJobName(instance.name, route.toImage));
  const verify = verifyJob && reportOf(verifyJob, view.ownedBy(PODS, verifyJob.metadata.uid));
  const rollback = job('rollback');
  const podImage = runningImage(pod);
  const backupMessage = backup?.status?.conditions?.find((c) => c.type === 'Failed')?.message;
  return {
    fromMajor: route.fromMajor,
    toMajor: route.toMajor,
    oldImage: route.fromImage,
    newImage: route.toImage,
    upReplicas: statefulSetReplicas(instance),
    ...(replicated(instance) ? { replication: replicationOf(ctx) } : {}),
    window: windowState(instance.object.spec.upgrade?.maintenanceWindow, now()),
    ...(backup
      ? {
          backup: {
            name: backup.metadata.name ?? backupName,
            ...(backup.status?.phase ? { phase: backup.status.phase } : {}),
            ...(backupMessage ? { message: backupMessage } : {}),
          },
        }
      : {}),
    statefulSet: {
      replicas: sts?.spec?.replicas ?? 1,
      ...(templateImage(sts) ? { image: templateImage(sts) as string } : {}),
      podExists: anyPod,
      podReady: Boolean(pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
      ...(podImage ? { podImage } : {}),
    },
    ...optional('preflight', job('preflight').state),
    ...optional('upgrade', job('upgrade').state),
    ...optional(
      'verify',
      verify &&
        (verify.state === 'failed'
          ? { state: 'failed' as const, message: verify.message ?? 'the version Job failed' }
          : verify.state === 'succeeded'
            ? { state: 'succeeded' as const, ...(verify.version ? { version: verify.version } : {}) }
            : { state: 'running' as const }),
    ),
    ...optional(
      'rollback',
      rollback.state && {
        ...rollback.state,
        ...(rollback.found?.metadata.annotations?.[ANNOTATIONS.cause]
          ? { cause: rollback.found.metadata.annotations[ANNOTATIONS.cause] }
          : {}),
      },
    ),
    ...optional('cleanup', job('cleanup').state),
    now: now(),
  };
}

/** The election record's primary as an ordinal (none while a handover runs), and the switchover asked for. */
function replicationOf({ instance, observed }: StepContext): NonNullable<UpgradeObservation['replication']> {
  const record = observed.replication ?? instance.object.status?.replication;
  const prefix = `${instance.names.statefulSet}-`;
  const ordinal =
    record?.primary?.startsWith(prefix) && !record.handover
      ? Number(record.primary.slice(prefix.length))
      : Number.NaN;
  const switchoverTo = instance.object.metadata.annotations?.[ANNOTATIONS.switchoverTo];
  return {
    ...(Number.isInteger(ordinal) && ordinal >= 0 ? { primaryOrdinal: ordinal } : {}),
    ...(switchoverTo ? { switchoverTo } : {}),
  };
}

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;

function condition(plan: UpgradePlan, route: UpgradeRoute): ConditionInput {
  const backup = plan.backup ? ` The pre-upgrade backup is SampleDBBackup ${plan.backup}.` : '';
  const attempt = route.attempt ?? 1;
  const which = attempt > 1 ? ` (attempt ${attempt})` : '';
  if (plan.step === 'Failed') {
    return {
      type: SAMPLEDB_CONDITIONS.upgrading,
      status: 'False',
      reason: REASONS.majorUpgradeFailed,
      message:
        `The upgrade from PostgreSQL ${route.fromMajor} to ${route.toMajor}${which} failed: ${plan.failure}. ` +
        (plan.workload.replicas > 0
          ? `PostgreSQL ${route.fromMajor} runs on its own files again.${backup} Set spec.version back to ` +
            `${route.fromMajor}, or fix the cause and set the annotation ${ANNOTATIONS.retryUpgrade} to a new ` +
            `value for attempt ${attempt + 1} (a new backup and new Jobs).`
          : `The database stays stopped.${backup}`),
    };
  }
  if (plan.step === 'Done') {
    return {
      type: SAMPLEDB_CONDITIONS.upgrading,
      status: 'False',
      reason: REASONS.upToDate,
      message: `Upgraded from PostgreSQL ${route.fromMajor} to ${route.toMajor}${which}.${backup}`,
    };
  }
  const why = plan.next.kind === 'wait' ? `: ${plan.next.why}` : '';
  return {
    type: SAMPLEDB_CONDITIONS.upgrading,
    status: 'True',
    reason: REASONS.majorUpgrade,
    message: `Step ${plan.step} of the upgrade from PostgreSQL ${route.fromMajor} to ${route.toMajor}${which}${why}.${plan.failure ? ` Rolling back because ${plan.failure}.` : ''}${backup}`,
  };
}

/** The Upgrading condition while an upgrade the spec no longer asks for is carried through. */
function specOverridden(plan: UpgradePlan, route: UpgradeRoute, specMajor: number): ConditionInput {
  const converting = `the upgrade Job has converted the data files to PostgreSQL ${route.toMajor}`;
  if (specMajor < route.toMajor) {
    return {
      type: SAMPLEDB_CONDITIONS.upgrading,
      status: plan.step === 'Done' ? 'False' : 'True',
      reason: REASONS.downgradeRefused,
      message:
        `The spec asks for PostgreSQL ${specMajor}, but ${converting}: a ${specMajor} server cannot run them. ` +
        `The upgrade from ${route.fromMajor} is carried through (step ${plan.step}) and the StatefulSet stays on ` +
        `${route.toMajor}; set spec.version to ${route.toMajor}.`,
    };
  }
  return {
    type: SAMPLEDB_CONDITIONS.upgrading,
    status: 'True',
    reason: REASONS.majorUpgrade,
    message: `The spec asks for PostgreSQL ${specMajor}, but ${converting}: that upgrade finishes first (step ${plan.step}), then ${specMajor} is due.`,
  };
}

export const runMajorUpgrade: Step = {
  name: 'major-upgrade',
  writes: ['apply', 'create-once', 'patch', 'event'],
  async run(ctx) {
    const { instance, write } = ctx;
    const record = upgradeRecord(instance.object);
    const request = instance.object.metadata.annotations?.[ANNOTATIONS.retryUpgrade];
    const abandoned = abandonedPreflight(ctx);
    let route = abandoned ?? routeOf(ctx, (major) => currentAttempt(record, major));
    if (!route) {
      // The spec went back to the files' major before this upgrade's Job (or after it failed): recorded, so raising
      // the major again starts a new attempt with a backup of the data as it is then, not this attempt's.
      const specMajor = majorVersion(instance.spec.version);
      if (record && record.step !== 'Done' && record.step !== 'Abandoned' && record.toMajor !== specMajor) {
        return { observed: { upgradeAbandoned: true } };
      }
      return undefined;
    }
    let obs: UpgradeObservation = {
      ...observe(ctx, route),
      ...(abandoned ? { abandoned: { preflightReading: true } } : {}),
    };
    let plan = planUpgrade(obs, instance.name, route.attempt);
    // A failed attempt stays failed until a new value of the annotation asks for the next one.
    let retriedFrom: UpgradePlan | undefined;
    if (!abandoned && retryWanted(plan, route.fromMajor, record, request)) {
      retriedFrom = plan;
      route = { ...route, attempt: (route.attempt ?? 1) + 1 };
      obs = observe(ctx, route);
      plan = planUpgrade(obs, instance.name, route.attempt);
    }
    const attempt = route.attempt ?? 1;
    const conditions = [condition(plan, route)];
    // The spec moved away from an upgrade that has already touched the files: carried through, and said so.
    const specMajor = majorVersion(instance.spec.version);
    const overridden =
      !abandoned && specMajor !== route.toMajor && plan.step !== 'RollingBack' && plan.step !== 'Failed'
        ? specOverridden(plan, route, specMajor)
        : undefined;
    if (overridden) conditions[0] = overridden;
    const observed = {
      majorUpgrade: {
        plan,
        route,
        attempt,
        ...((request ?? record?.retryRequest) !== undefined
          ? { retryRequest: (request ?? record?.retryRequest) as string }
          : {}),
        ...(plan.step === 'WaitingForWindow' && obs.window.opensAt
          ? { waitingUntil: obs.window.opensAt }
          : {}),
      },
    };
    // Nothing to do once done: the workload is the spec's again (the data major says so).
    if (
      plan.step === 'Done' &&
      !workloadVersion(instance, ctx.view.get(STATEFULSETS, instance.namespace, instance.names.statefulSet))
        .held
    ) {
      return { conditions, observed };
    }
    const next = plan.next;
    const event = (type: 'Normal' | 'Warning', reason: string, note: string) =>
      write.event({ regarding: instance.object, type, reason, action: plan.step, note });
    if (retriedFrom || attempt > (record?.toMajor === route.toMajor ? (record.attempt ?? 1) : 1)) {
      await event(
        'Normal',
        EVENT_REASONS.upgradeRetried,
        `Attempt ${attempt} of the upgrade from PostgreSQL ${route.fromMajor} to ${route.toMajor}` +
          (retriedFrom
            ? ` (${ANNOTATIONS.retryUpgrade}=${request}); attempt ${attempt - 1} failed: ${retriedFrom.failure}.`
            : `: the last attempt was abandoned.`) +
          ` Its backup ${preUpgradeBackupName(instance.name, route.toMajor, attempt)} is new; the earlier backup is kept.`,
      );
    }
    switch (next.kind) {
      case 'create-backup':
        await write.createOnce(SAMPLEDB_BACKUPS, preUpgradeBackup(instance, route));
        await event(
          'Normal',
          EVENT_REASONS.upgradeStep,
          `Backing up to SampleDBBackup ${next.name} before the upgrade from ${route.fromMajor} to ${route.toMajor}.`,
        );
        break;
      case 'request-switchover':
        // The annotation a user would set: the replication step hands over cleanly (or refuses, with an Event) and
        // removes it once done. A user's own request is never overwritten: the plan waits for it instead.
        await write.patch(
          SAMPLEDBS,
          { namespace: instance.namespace, name: instance.name },
          {
            metadata: { annotations: { [ANNOTATIONS.switchoverTo]: next.target } },
          },
        );
        await event(
          'Normal',
          EVENT_REASONS.upgradeStep,
          `Handing the primary over to ${next.target} before the upgrade from ${route.fromMajor} to ${route.toMajor}: the upgrade converts its volume and runs it alone until verified.`,
        );
        break;
      case 'create-preflight':
      case 'create-upgrade':
      case 'create-cleanup': {
        const mode = next.kind.slice('create-'.length) as 'preflight' | 'upgrade' | 'cleanup';
        const nodeName = ctx.view.get(PODS, instance.namespace, instance.names.pod)?.spec?.nodeName;
        const job = await write.apply(
          JOBS,
          upgradeJob(instance, mode, route, mode === 'cleanup' && nodeName ? { nodeName } : {}),
        );
        await event('Normal', EVENT_REASONS.upgradeStep, `Step ${plan.step}: Job ${job.metadata.name}.`);
        break;
      }
      case 'create-rollback': {
        const job = await write.apply(JOBS, upgradeJob(instance, 'rollback', route, { cause: next.cause }));
        await event(
          'Warning',
          EVENT_REASONS.upgradeFailed,
          `Rolling back to PostgreSQL ${route.fromMajor} (Job ${job.metadata.name}): ${next.cause}.`,
        );
        break;
      }
      case 'create-verify': {
        const job = await write.apply(JOBS, versionJob(instance, route.toImage));
        await event(
          'Normal',
          EVENT_REASONS.upgradeStep,
          `PostgreSQL ${route.toMajor} runs; Job ${job.metadata.name} verifies it.`,
        );
        break;
      }
      default:
        break;
    }
    const previousReason = instance.object.status?.conditions?.find(
      (c) => c.type === SAMPLEDB_CONDITIONS.upgrading,
    )?.reason;
    if (overridden && overridden.reason !== previousReason) {
      await event('Warning', EVENT_REASONS.downgradeRefused, overridden.message);
    }
    const previousStep = instance.object.status?.upgrade?.step;
    if (plan.step !== previousStep && (plan.step === 'Failed' || plan.step === 'Done')) {
      await event(
        plan.step === 'Failed' ? 'Warning' : 'Normal',
        plan.step === 'Failed' ? EVENT_REASONS.upgradeFailed : EVENT_REASONS.upgradeCompleted,
        conditions[0]?.message ?? '',
      );
    }
    const settled = plan.step === 'Failed' || plan.step === 'Done';
    if (plan.step === 'WaitingForWindow') {
      const opensIn = obs.window.opensAt ? Date.parse(obs.window.opensAt) - obs.now.getTime() : 3_600_000;
      return { observed, conditions, requeueAfterMs: Math.max(1_000, Math.min(3_600_000, opensIn)) };
    }
    // Job and pod events bring most changes; the start timeout needs the clock.
    return settled ? { observed, conditions } : { observed, conditions, requeueAfterMs: 15_000 };
  },
};
