// How applications find the database: the connection ConfigMap (no password) and the servicebinding.io Secret,
// which carries the owner only (never the superuser) and follows a changed password only once the role has it.

import { REASONS, SAMPLEDB_CONDITIONS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';
import { bindingSecret, connectionConfigMap } from '../connection.ts';
import { decodeSecretValue, PASSWORD_KEY, passwordFingerprint, readCredentials } from '../credentials.ts';
import { jobState } from '../job-state.ts';
import {
  decidePublishedPassword,
  ownerPasswordJob,
  ownerPasswordJobName,
  type PublishDecision,
} from '../owner-password.ts';
import { CONFIGMAPS, JOBS, SECRETS } from '../resources.ts';
import type { Step } from './context.ts';

function rotationCondition(decision: PublishDecision, jobName: string): ConditionInput {
  const type = SAMPLEDB_CONDITIONS.credentialsApplied;
  switch (decision.state) {
    case 'applied':
      return {
        type,
        status: 'True',
        reason: REASONS.passwordApplied,
        message: 'The binding Secret has the password of the credentials Secret.',
      };
    case 'waiting-for-init':
      return {
        type,
        status: 'False',
        reason: REASONS.passwordChanging,
        message:
          'The credentials Secret has a new password; it is given to the role once the init Job has run.',
      };
    case 'changing':
      return {
        type,
        status: 'False',
        reason: REASONS.passwordChanging,
        message: `Job ${jobName} gives the role the new password of the credentials Secret; the binding Secret keeps the old one until it succeeds.`,
      };
    case 'failed':
      return {
        type,
        status: 'False',
        reason: REASONS.passwordChangeFailed,
        message: `Job ${jobName} could not give the role the new password (kubectl logs job/${jobName}); the binding Secret keeps the old one, which still works.`,
      };
  }
}

export const publishConnection: Step = {
  name: 'publish',
  writes: ['apply', 'create-once'],
  async run({ instance, observed, view, write }) {
    await write.apply(CONFIGMAPS, connectionConfigMap(instance));
    const credentials = readCredentials(observed.credentialsSecret);
    const superuserPassword = decodeSecretValue(observed.superuserSecret?.data?.[PASSWORD_KEY]);
    if (!credentials || !superuserPassword) return undefined;
    const { namespace } = instance;
    const binding = view.get(SECRETS, namespace, instance.names.bindingSecret);
    const fingerprint = passwordFingerprint(superuserPassword, credentials.password);
    const jobName = ownerPasswordJobName(instance.name, fingerprint);
    const job = view.get(JOBS, namespace, jobName);
    const decision = decidePublishedPassword({
      current: credentials.password,
      published: decodeSecretValue(binding?.data?.[PASSWORD_KEY]),
      initSucceeded: (observed.initJob?.status?.succeeded ?? 0) > 0,
      job: job ? jobState(job) : undefined,
    });
    if (decision.createJob) await write.createOnce(JOBS, ownerPasswordJob(instance, fingerprint));
    const conditions = [rotationCondition(decision, jobName)];
    if (decision.password === undefined) return { conditions };
    return {
      observed: { bindingSecret: await write.apply(SECRETS, bindingSecret(instance, decision.password)) },
      conditions,
    };
  },
};
