// What status.currentVersion and the Upgrading condition say about the version the server runs, from what the
// cluster shows: the image of the pod template and of the pod, whether the pod is ready, and which Job reported
// the server's own version for which image (the init Job for the first image, a version Job for every later one).
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { ANNOTATIONS } from '../../api/index.ts';
import { reportedServerVersion } from '../status.ts';

export interface VersionReport {
  image: string;
  state: 'running' | 'succeeded' | 'failed';
  /** What the server said (succeeded only). */
  version?: string;
  /** Why it failed (the last pod's termination message). */
  message?: string;
  job: string;
}

function jobState(job: V1Job): VersionReport['state'] {
  if ((job.status?.succeeded ?? 0) > 0) return 'succeeded';
  if (job.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True')) return 'failed';
  return 'running';
}

/** The report of one Job (init or version) for the image its container ran. */
export function reportOf(job: V1Job, pods: readonly V1Pod[]): VersionReport | undefined {
  const image =
    job.metadata?.annotations?.[ANNOTATIONS.image] ?? job.spec?.template?.spec?.containers?.[0]?.image;
  if (!image) return undefined;
  const state = jobState(job);
  const version = reportedServerVersion(pods);
  const message = pods
    .map((p) => p.status?.containerStatuses?.[0]?.state?.terminated)
    .filter((t) => t && t.exitCode !== 0)
    .map((t) => t?.message?.trim())
    .filter((m): m is string => Boolean(m))
    .at(-1);
  return {
    image,
    state: state === 'succeeded' && !version ? 'failed' : state,
    ...(version ? { version } : {}),
    ...(message ? { message: message.slice(-1024) } : {}),
    job: job.metadata?.name ?? '',
  };
}

export interface VersionObservation {
  /** The postgres image of the StatefulSet's pod template (what the pod should run). */
  templateImage?: string;
  /** The postgres image of the pod that exists. */
  podImage?: string;
  podReady: boolean;
  /** The StatefulSet controller has rolled every pod to the current template. */
  rolledOut: boolean;
  /** The init Job has succeeded: before, there is no server to ask and nothing to upgrade. */
  initialized: boolean;
  /** Reports by image (init Job and version Jobs). */
  reports: readonly VersionReport[];
}

export type VersionStep =
  | { kind: 'not-initialized' }
  | { kind: 'rolling'; image: string }
  | { kind: 'ask-version'; image: string }
  | { kind: 'asking'; image: string; job: string }
  | { kind: 'check-failed'; image: string; job: string; message: string }
  | { kind: 'reported'; image: string; version: string };

/** Pure: where the running server's version stands, and whether a version Job is due. */
export function versionStep(obs: VersionObservation): VersionStep {
  if (!obs.initialized || !obs.templateImage) return { kind: 'not-initialized' };
  const image = obs.templateImage;
  if (obs.podImage !== image || !obs.rolledOut || !obs.podReady) {
    // An image the server already reported on is no upgrade: a restart for a settings change, say.
    const known = obs.reports.find((r) => r.image === image && r.state === 'succeeded');
    if (known) return { kind: 'reported', image, version: known.version as string };
    return { kind: 'rolling', image };
  }
  const report =
    obs.reports.find((r) => r.image === image && r.state === 'succeeded') ??
    obs.reports.find((r) => r.image === image && r.state === 'running') ??
    obs.reports.find((r) => r.image === image);
  if (!report) return { kind: 'ask-version', image };
  if (report.state === 'running') return { kind: 'asking', image, job: report.job };
  if (report.state === 'failed')
    return {
      kind: 'check-failed',
      image,
      job: report.job,
      message: report.message ?? 'the Job reported no server_version',
    };
  return { kind: 'reported', image, version: report.version as string };
}

/** The version the running server last reported: for the pod's image, else what the status already says. */
export function currentVersionOf(obs: VersionObservation, previous: string | undefined): string | undefined {
  const forPod = obs.reports.find((r) => r.image === obs.podImage && r.state === 'succeeded')?.version;
  return forPod ?? previous;
}
