// Rotation of the owner's password: a change of the password in the credentials Secret reaches the role in
// PostgreSQL through a Job, and only then the binding Secret, so applications are never handed a password the
// database does not accept yet. The decision is pure (decidePublishedPassword); the step is in steps/publish.ts.
import { createHash } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import { POSTGRES_PORT } from '../api/index.ts';
import { PASSWORD_KEY } from './credentials.ts';
import type { SampleDbInstance } from './instance.ts';
import type { JobState } from './job-state.ts';
import { childMeta } from './meta.ts';
import { boundedName } from './names.ts';
import { literalEnv, scriptJobPodSpec, secretEnv, superuserEnv } from './pod.ts';
import { OWNER_PASSWORD_SCRIPT, ownerPasswordScriptEnv } from './scripts/owner-password.ts';

export const OWNER_PASSWORD_CONTAINER = 'owner-password';
const BACKOFF_LIMIT = 2;
/** A finished Job is cleaned up after an hour; by then the binding has long followed it. */
const TTL_SECONDS_AFTER_FINISHED = 3600;

/** One Job per password: the name carries a prefix of the keyed fingerprint (`passwordFingerprint`). */
export function ownerPasswordJobName(sampleDbName: string, fingerprint: string): string {
  const short = createHash('sha256').update(fingerprint).digest('hex').slice(0, 10);
  return boundedName(sampleDbName, `password-${short}`);
}

export function ownerPasswordJob(instance: SampleDbInstance, fingerprint: string): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(instance, ownerPasswordJobName(instance.name, fingerprint), 'credentials'),
    spec: {
      backoffLimit: BACKOFF_LIMIT,
      activeDeadlineSeconds: 900,
      ttlSecondsAfterFinished: TTL_SECONDS_AFTER_FINISHED,
      template: {
        metadata: { labels: { ...instance.labels.credentials } },
        spec: scriptJobPodSpec({
          name: OWNER_PASSWORD_CONTAINER,
          image: instance.spec.image,
          script: OWNER_PASSWORD_SCRIPT,
          env: [
            ...literalEnv(
              ownerPasswordScriptEnv({
                host: instance.podHost,
                port: POSTGRES_PORT,
                owner: instance.spec.bootstrap.owner,
                fingerprint,
              }),
            ),
            ...superuserEnv(instance),
            secretEnv('SAMPLEDB_OWNER_PASSWORD', instance.credentials.secretName, PASSWORD_KEY),
          ],
        }),
      },
    },
  };
}

export interface PublishInput {
  /** The password in the credentials Secret now. */
  current: string;
  /** The password the binding Secret carries, if there is one. */
  published: string | undefined;
  /** The init Job has succeeded (it set the password its pod started with). */
  initSucceeded: boolean;
  /** The password Job for `current`, if one exists. */
  job: JobState | undefined;
}

export interface PublishDecision {
  /** What the binding carries after this reconcile; `undefined`: no binding yet. */
  password: string | undefined;
  /** Create the password Job for `current`. */
  createJob: boolean;
  /** Where the rotation stands: `applied` when the binding has the Secret's password. */
  state: 'applied' | 'waiting-for-init' | 'changing' | 'failed';
}

/**
 * Pure: which password the binding Secret carries. Before the init Job succeeds, the first binding gets the Secret's
 * password (the init Job sets it); after that, a different password reaches the binding only once the Job that gave
 * it to the role succeeded.
 */
export function decidePublishedPassword(input: PublishInput): PublishDecision {
  const { current, published } = input;
  if (published === current) return { password: current, createJob: false, state: 'applied' };
  if (!input.initSucceeded) {
    return published === undefined
      ? { password: current, createJob: false, state: 'applied' }
      : { password: published, createJob: false, state: 'waiting-for-init' };
  }
  switch (input.job) {
    case undefined:
      return { password: published, createJob: true, state: 'changing' };
    case 'running':
      return { password: published, createJob: false, state: 'changing' };
    case 'succeeded':
      return { password: current, createJob: false, state: 'applied' };
    case 'failed':
      return { password: published, createJob: false, state: 'failed' };
  }
}
