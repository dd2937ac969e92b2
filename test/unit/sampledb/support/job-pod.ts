// The pod a Job controller would leave for a Job that ran: owned by the Job, its one container terminated.
import type { V1Job, V1Pod } from '@kubernetes/client-node';

export function finishedJobPod(job: V1Job, exitCode: number, message: string, finishedAt: Date): V1Pod {
  const name = job.metadata?.name as string;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${name}-pod`,
      namespace: job.metadata?.namespace as string,
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: job.metadata?.uid as string }],
    },
    status: {
      containerStatuses: [
        {
          name: 'c',
          image: job.spec?.template.spec?.containers[0]?.image ?? '',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode, message, finishedAt: finishedAt as never } },
        },
      ],
    },
  };
}

/** The Job's status once its pod ended: succeeded, or failed for good (backoffLimit reached). */
export function finishedJob(job: V1Job, exitCode: number, at: Date): V1Job {
  return {
    ...job,
    status:
      exitCode === 0
        ? { succeeded: 1, completionTime: at as never }
        : { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] },
  };
}
