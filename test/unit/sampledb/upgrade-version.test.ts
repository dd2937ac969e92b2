import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { desiredStatefulSet } from '../../../src/sampledb/steps/workload.ts';
import {
  currentVersionOf,
  reportOf,
  type VersionObservation,
  versionStep,
} from '../../../src/sampledb/upgrade/version.ts';
import { templateImage, workloadVersion } from '../../../src/sampledb/upgrade/workload.ts';
import { versionJob, versionJobName } from '../../../src/sampledb/version-job.ts';
import { restrictedPodSpecViolations } from '../../support/restricted-pod-spec.ts';
import { sampleDb } from '../../support/sampledb.ts';

const OLD = 'localhost/postgres:15.8';
const NEW = 'localhost/postgres:15.10';
const report = (
  image: string,
  version?: string,
  state: 'succeeded' | 'running' | 'failed' = 'succeeded',
) => ({
  image,
  state,
  job: `job-${image}`,
  ...(version ? { version } : {}),
});
const base: VersionObservation = {
  templateImage: OLD,
  podImage: OLD,
  podReady: true,
  rolledOut: true,
  initialized: true,
  reports: [report(OLD, '15.8')],
};

describe('versionStep (minor upgrades and the running version)', () => {
  it('waits for the init Job: before it there is no server to ask', () => {
    assert.deepEqual(versionStep({ ...base, initialized: false, reports: [] }), { kind: 'not-initialized' });
  });

  it('takes the init Job report for the first image: no extra Job', () => {
    assert.deepEqual(versionStep(base), { kind: 'reported', image: OLD, version: '15.8' });
  });

  it('rolls a new image, then asks the server on it, then reports what it said', () => {
    const rolling = { ...base, templateImage: NEW, rolledOut: false };
    assert.deepEqual(versionStep(rolling), { kind: 'rolling', image: NEW });
    // The pod was replaced but is not ready yet: still rolling, no Job against a server that does not answer.
    assert.deepEqual(versionStep({ ...rolling, podImage: NEW, rolledOut: true, podReady: false }), {
      kind: 'rolling',
      image: NEW,
    });
    const onNew = { ...base, templateImage: NEW, podImage: NEW };
    assert.deepEqual(versionStep(onNew), { kind: 'ask-version', image: NEW });
    assert.equal(
      versionStep({ ...onNew, reports: [...base.reports, report(NEW, undefined, 'running')] }).kind,
      'asking',
    );
    const done = { ...onNew, reports: [report(NEW, '15.10'), ...base.reports] };
    assert.deepEqual(versionStep(done), { kind: 'reported', image: NEW, version: '15.10' });
    assert.equal(currentVersionOf(done, '15.8'), '15.10');
    // While rolling, currentVersion stays what the old server said.
    assert.equal(currentVersionOf(rolling, '15.8'), '15.8');
  });

  it('is no upgrade when the pod restarts on an image already reported (a settings change)', () => {
    assert.deepEqual(versionStep({ ...base, rolledOut: false, podReady: false }), {
      kind: 'reported',
      image: OLD,
      version: '15.8',
    });
  });

  it('says why the check failed', () => {
    const failed = {
      ...base,
      templateImage: NEW,
      podImage: NEW,
      reports: [{ ...report(NEW, undefined, 'failed'), message: 'the owner app cannot log in' }],
    };
    const step = versionStep(failed);
    assert.equal(step.kind, 'check-failed');
    assert.match(JSON.stringify(step), /cannot log in/);
  });
});

describe('reportOf', () => {
  const pod = (exitCode: number, message: string): V1Pod => ({
    status: {
      containerStatuses: [
        {
          name: 'version',
          image: NEW,
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode, message } },
        },
      ],
    },
  });
  it('reads the server_version of a succeeded Job and the error of a failed one', () => {
    const job = versionJob(resolveInstance(sampleDb()), NEW);
    const succeeded: V1Job = { ...job, status: { succeeded: 1 } };
    assert.deepEqual(reportOf(succeeded, [pod(0, 'server_version=15.10\n')]), {
      image: NEW,
      state: 'succeeded',
      version: '15.10',
      job: job.metadata?.name,
    });
    const failed: V1Job = { ...job, status: { conditions: [{ type: 'Failed', status: 'True' }] } };
    assert.equal(reportOf(failed, [pod(1, 'connection refused')])?.message, 'connection refused');
    // Succeeded without a report is no proof of a version.
    assert.equal(reportOf(succeeded, [])?.state, 'failed');
  });
});

describe('versionJob', () => {
  it('runs the image it asks about, restricted, as one Job per image', () => {
    const instance = resolveInstance(sampleDb());
    const job = versionJob(instance, NEW);
    assert.equal(job.spec?.template.spec?.containers[0]?.image, NEW);
    assert.deepEqual(
      restrictedPodSpecViolations(job.spec?.template.spec ?? {}, { readOnlyRootFilesystem: true }),
      [],
    );
    assert.notEqual(versionJobName('orders', OLD), versionJobName('orders', NEW));
    assert.ok(versionJobName('x'.repeat(52), NEW).length <= 63);
    assert.doesNotMatch(JSON.stringify(job), /password":/i);
  });
});

describe('workloadVersion (the image the data files allow)', () => {
  it('passes a minor change straight through and records the data major', () => {
    const existing = desiredStatefulSet(resolveInstance(sampleDb({ version: '15.8' })), undefined);
    assert.equal(existing.metadata?.annotations?.['sampledb.io/data-major'], '15');
    const desired = desiredStatefulSet(resolveInstance(sampleDb({ version: '15.10' })), existing);
    assert.equal(templateImage(desired), 'docker.io/library/postgres:15.10');
  });

  it('holds the image while the spec asks for another major than the data files have', () => {
    const existing = desiredStatefulSet(resolveInstance(sampleDb({ version: '15' })), undefined);
    const raised = resolveInstance(sampleDb({ version: '17' }));
    assert.deepEqual(workloadVersion(raised, existing), {
      image: 'docker.io/library/postgres:15',
      dataMajor: 15,
      held: { fromMajor: 15, toMajor: 17, specImage: 'docker.io/library/postgres:17' },
    });
    assert.equal(templateImage(desiredStatefulSet(raised, existing)), 'docker.io/library/postgres:15');
    // A new SampleDB starts on the spec's version.
    assert.equal(templateImage(desiredStatefulSet(raised, undefined)), 'docker.io/library/postgres:17');
  });

  it('reads the data major of a StatefulSet from before the record from what the server reported', () => {
    const existing = desiredStatefulSet(resolveInstance(sampleDb({ version: '15' })), undefined);
    delete existing.metadata?.annotations?.['sampledb.io/data-major'];
    const db = { ...sampleDb({ version: '17' }), status: { currentVersion: '15.8' } };
    assert.equal(workloadVersion(resolveInstance(db), existing).dataMajor, 15);
  });
});
