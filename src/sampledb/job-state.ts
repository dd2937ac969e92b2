// Where a Job the operator started stands, as the steps that wait on one (password, prune) need to know it.
import type { V1Job } from '@kubernetes/client-node';

export type JobState = 'running' | 'succeeded' | 'failed';

export function jobState(job: V1Job): JobState {
  if ((job.status?.succeeded ?? 0) > 0) return 'succeeded';
  const failed = job.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True');
  return failed ? 'failed' : 'running';
}
