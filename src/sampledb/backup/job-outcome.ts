// The outcome of a data-path script Job (backup, verification) from the Job and its pods: pure. Success is only ever
// what the script itself reported in its container's termination message; a Job that "succeeded" without that report
// has no result.
import type { V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import { REASONS } from '../../api/index.ts';
import { metaTime } from '../../runtime/index.ts';

const byCreation = (a: V1Pod, b: V1Pod) =>
  String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? ''));

function scriptContainer(pod: V1Pod, name: string): V1ContainerStatus | undefined {
  return pod.status?.containerStatuses?.find((c) => c.name === name) ?? pod.status?.containerStatuses?.[0];
}

function terminationMessage(pod: V1Pod, container: string): string | undefined {
  const terminated = scriptContainer(pod, container)?.state?.terminated;
  return terminated?.message?.trim() || undefined;
}

const jobCondition = (job: V1Job, type: string) =>
  job.status?.conditions?.find((c) => c.type === type && c.status === 'True');

/** What a script Job (backup, verification) ended with: the result its container reported, or why it failed. */
export type ScriptJobOutcome<T> =
  | { phase: 'Running' }
  | { phase: 'Succeeded'; result: T; finishedAt: string }
  | { phase: 'NoResult' }
  | { phase: 'Failed'; reason: string; message: string };

export function scriptJobOutcome<T>(
  job: V1Job,
  pods: readonly V1Pod[],
  container: string,
  parse: (message: string | undefined) => T | undefined,
): ScriptJobOutcome<T> {
  const sorted = [...pods].sort(byCreation);
  if (jobCondition(job, 'Complete') || (job.status?.succeeded ?? 0) > 0) {
    const succeeded = sorted.filter((p) => p.status?.phase === 'Succeeded');
    for (const pod of succeeded.reverse()) {
      const result = parse(terminationMessage(pod, container));
      if (result) {
        const finishedAt = scriptContainer(pod, container)?.state?.terminated?.finishedAt;
        // An empty timestamp is no timestamp: fall through to the next one.
        const at = new Date(finishedAt || job.status?.completionTime || Date.now());
        return { phase: 'Succeeded', result, finishedAt: metaTime(at) };
      }
    }
    return { phase: 'NoResult' };
  }
  const failed = jobCondition(job, 'Failed');
  if (failed) {
    const last = sorted
      .map((pod) => terminationMessage(pod, container))
      .filter((m) => m !== undefined)
      .at(-1);
    return {
      phase: 'Failed',
      reason: failed.reason ?? REASONS.backupFailed,
      message: `${failed.message ?? 'the Job failed'}${last ? `; last error: ${last.slice(-1024)}` : ''}`,
    };
  }
  return { phase: 'Running' };
}
