// The running server's version: once the pod runs the template's image and is ready, a version Job asks the server
// (unless the init Job already did for that image), and status.currentVersion is what it answered. A changed image
// of the same major (a minor upgrade, a new digest) is rolled by the StatefulSet, gated on the pod's readiness; the
// Upgrading condition names the step, and each step is an Event.

import { EVENT_REASONS, REASONS, SAMPLEDB_CONDITIONS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';
import { JOBS, PODS } from '../resources.ts';
import {
  currentVersionOf,
  reportOf,
  type VersionObservation,
  type VersionReport,
  versionStep,
} from '../upgrade/version.ts';
import { templateImage } from '../upgrade/workload.ts';
import { runningImage, versionJob, versionJobName } from '../version-job.ts';
import type { Observation, Step, StepContext } from './context.ts';

function observe({ instance, observed, view }: StepContext): VersionObservation {
  const sts = observed.statefulSet;
  const image = templateImage(sts);
  const reports: VersionReport[] = [];
  if (observed.initJob) {
    const report = reportOf(observed.initJob, observed.initJobPods ?? []);
    if (report) reports.push(report);
  }
  for (const candidate of new Set([image, runningImage(observed.pod)])) {
    if (!candidate) continue;
    const job = view.get(JOBS, instance.namespace, versionJobName(instance.name, candidate));
    const report = job && reportOf(job, view.ownedBy(PODS, job.metadata.uid));
    if (report) reports.unshift(report);
  }
  const status = sts?.status;
  const podReady = Boolean(
    observed.pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  const rolledOut =
    (status?.observedGeneration ?? 0) >= (sts?.metadata?.generation ?? 0) &&
    (!status?.updateRevision || status.updateRevision === status.currentRevision);
  return {
    ...(image ? { templateImage: image } : {}),
    ...(runningImage(observed.pod) ? { podImage: runningImage(observed.pod) as string } : {}),
    podReady,
    rolledOut,
    initialized: (observed.initJob?.status?.succeeded ?? 0) > 0,
    reports,
  };
}

const upgrading = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
  type: SAMPLEDB_CONDITIONS.upgrading,
  status,
  reason,
  message,
});

export const reportVersion: Step = {
  name: 'version',
  writes: ['apply', 'event'],
  async run(ctx) {
    const { instance, write } = ctx;
    const obs = observe(ctx);
    const step = versionStep(obs);
    const previous = instance.object.status?.currentVersion;
    const serverVersion = currentVersionOf(obs, previous);
    const observed: Partial<Observation> = serverVersion ? { serverVersion } : {};
    const wasUpgrading = instance.object.status?.conditions?.some(
      (c) => c.type === SAMPLEDB_CONDITIONS.upgrading && c.status === 'True',
    );
    // A major upgrade owns the Upgrading condition (and verifies the new server with the same version Job).
    if (ctx.observed.majorUpgrade) return { observed };
    const held = ctx.observed.heldMajor;
    if (held) {
      const refused = held.toMajor < held.fromMajor;
      const condition = upgrading(
        'False',
        refused ? REASONS.downgradeRefused : REASONS.majorUpgrade,
        refused
          ? `The spec asks for PostgreSQL ${held.toMajor}, below the ${held.fromMajor} of the data files: a server cannot run them. The StatefulSet stays on ${held.fromMajor}; set spec.version back to ${held.fromMajor}.`
          : `The spec asks for PostgreSQL ${held.toMajor}; the data files are ${held.fromMajor}. This operator version does not run major upgrades yet: the StatefulSet stays on its ${held.fromMajor} image, untouched. Set spec.version back to ${held.fromMajor}, or restore a backup into a new SampleDB on ${held.toMajor}.`,
      );
      const previousReason = instance.object.status?.conditions?.find(
        (c) => c.type === SAMPLEDB_CONDITIONS.upgrading,
      )?.reason;
      if (refused && previousReason !== condition.reason) {
        await write.event({
          regarding: instance.object,
          type: 'Warning',
          reason: EVENT_REASONS.downgradeRefused,
          action: 'Refused',
          note: condition.message,
        });
      }
      return { observed, conditions: [condition] };
    }
    const inProgress = (reason: string, message: string) => ({
      observed: { ...observed, upgrading: true },
      conditions: [upgrading('True', reason, message)],
    });
    const verifying = (job: string | undefined, image: string) =>
      inProgress(
        REASONS.verifyingVersion,
        `Step VerifyVersion: Job ${job} asks the server on image ${image} its version.`,
      );
    switch (step.kind) {
      case 'not-initialized':
        return { observed };
      case 'rolling': {
        const message = `Step RollingRestart: pod ${instance.primary.pod} restarts on image ${step.image}; the StatefulSet waits for it to be ready.`;
        if (!wasUpgrading)
          await write.event({
            regarding: instance.object,
            type: 'Normal',
            reason: EVENT_REASONS.upgradeStep,
            action: 'RollingRestart',
            note: message,
          });
        return inProgress(REASONS.rollingRestart, message);
      }
      case 'ask-version': {
        const job = await write.apply(JOBS, versionJob(instance, step.image));
        await write.event({
          regarding: instance.object,
          type: 'Normal',
          reason: EVENT_REASONS.upgradeStep,
          action: 'VerifyVersion',
          note: `Pod ${instance.primary.pod} runs image ${step.image}; Job ${job.metadata.name} asks the server its version.`,
        });
        return verifying(job.metadata.name, step.image);
      }
      case 'asking':
        return verifying(step.job, step.image);
      case 'check-failed':
        if (wasUpgrading)
          await write.event({
            regarding: instance.object,
            type: 'Warning',
            reason: EVENT_REASONS.upgradeFailed,
            action: 'VerifyVersion',
            note: `Job ${step.job} on image ${step.image} failed: ${step.message}`,
          });
        return {
          observed,
          conditions: [
            upgrading(
              'False',
              REASONS.versionCheckFailed,
              `Job ${step.job} could not confirm the server on image ${step.image}: ${step.message}. Fix the cause, then delete Job ${step.job} to check again.`,
            ),
          ],
        };
      case 'reported':
        if (wasUpgrading)
          await write.event({
            regarding: instance.object,
            type: 'Normal',
            reason: EVENT_REASONS.upgradeCompleted,
            action: 'VerifyVersion',
            note: `PostgreSQL ${step.version} runs image ${step.image}.`,
          });
        return {
          observed: { ...observed, serverVersion: step.version },
          conditions: [
            upgrading('False', REASONS.upToDate, `PostgreSQL ${step.version} runs image ${step.image}.`),
          ],
        };
    }
  },
};
