import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1EndpointSlice, V1Job, V1Pod, V1Secret, V1StatefulSet } from '@kubernetes/client-node';
import { ANNOTATIONS, type SampleDbObject } from '../../../src/api/index.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { type ObservedChildren, sampleDbStatus } from '../../../src/sampledb/status.ts';
import { sampleDb } from '../../support/sampledb.ts';

const NOW = new Date('2026-01-01T00:00:00Z');
const b64 = (v: string) => Buffer.from(v).toString('base64');
const credentials: V1Secret = { data: { username: b64('app'), password: b64('pw') } };

const sts = (status: Partial<NonNullable<V1StatefulSet['status']>>, generation = 1): V1StatefulSet => ({
  metadata: { name: 'orders', generation },
  spec: { replicas: 1, selector: {}, serviceName: 'orders-headless', template: {} },
  status: {
    replicas: 1,
    observedGeneration: generation,
    currentRevision: 'r1',
    updateRevision: 'r1',
    updatedReplicas: 1,
    ...status,
  },
});
const readySts = sts({ readyReplicas: 1 });
const notReadySts = sts({ readyReplicas: 0 });
const job = (
  conditions: Array<{ type: string; status: string; reason?: string; message?: string }>,
  succeeded = 0,
): V1Job => ({
  metadata: { name: 'orders-init' },
  status: { conditions, succeeded },
});
const succeededJob = job([{ type: 'Complete', status: 'True' }], 1);
const boundPvc = { status: { phase: 'Bound' } };

function conditionOf(status: ReturnType<typeof sampleDbStatus>, type: string) {
  const condition = status.conditions?.find((c) => c.type === type);
  assert.ok(condition, `no ${type} condition`);
  return condition;
}

const healthy: ObservedChildren = {
  statefulSet: readySts,
  dataPvc: boundPvc,
  credentialsSecret: credentials,
  initJob: succeededJob,
  bindingSecret: { metadata: { name: 'orders-binding' } },
};

describe('sampleDbStatus', () => {
  it('is Ready when the pod is ready and the init Job succeeded', () => {
    const status = sampleDbStatus(resolveInstance(sampleDb({}, { generation: 3 })), healthy, NOW);
    assert.equal(status.phase, 'Ready');
    for (const type of ['Ready', 'Provisioned', 'Initialized', 'Configured']) {
      assert.equal(conditionOf(status, type).status, 'True', type);
    }
    assert.equal(status.observedGeneration, 3);
    assert.equal(conditionOf(status, 'Ready').observedGeneration, 3);
    assert.equal(status.endpoint, 'orders.shop.svc:5432');
    assert.deepEqual(status.binding, { name: 'orders-binding' });
    // No Job has reported what the server runs: no currentVersion rather than a copy of the spec.
    assert.equal(status.currentVersion, undefined);
  });

  it("reports the version the server gave the init Job as currentVersion, not the spec's", () => {
    const initPod = (exitCode: number, message: string): V1Pod => ({
      status: {
        containerStatuses: [
          {
            name: 'init',
            image: '',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode, message } },
          },
        ],
      },
    });
    const observed = {
      ...healthy,
      initJobPods: [initPod(1, 'connection refused'), initPod(0, 'server_version=15.8\n')],
    };
    assert.equal(
      sampleDbStatus(resolveInstance(sampleDb({ version: '15' })), observed, NOW).currentVersion,
      '15.8',
    );
    // Without a report (older operator, pods gone): what was reported before, never the spec's version.
    const earlier = { ...sampleDb({ version: '15' }), status: { currentVersion: '15.7' } };
    assert.equal(sampleDbStatus(resolveInstance(earlier), healthy, NOW).currentVersion, '15.7');
    assert.equal(
      sampleDbStatus(resolveInstance(sampleDb({ version: '15' })), healthy, NOW).currentVersion,
      undefined,
    );
    // A version Job's report for the image the pod runs wins over the init Job's.
    assert.equal(
      sampleDbStatus(resolveInstance(earlier), { ...observed, serverVersion: '15.10' }, NOW).currentVersion,
      '15.10',
    );
  });

  it('is Upgrading while a version change runs', () => {
    const status = sampleDbStatus(resolveInstance(sampleDb()), { ...healthy, upgrading: true }, NOW);
    assert.equal(status.phase, 'Upgrading');
  });

  it('is not Ready while the StatefulSet has no ready replica, even with a succeeded init Job', () => {
    const status = sampleDbStatus(resolveInstance(sampleDb()), { ...healthy, statefulSet: notReadySts }, NOW);
    assert.equal(status.phase, 'Provisioning');
    assert.equal(conditionOf(status, 'Ready').status, 'False');
    assert.equal(conditionOf(status, 'Provisioned').reason, 'PodPending');
  });

  describe('the client Service routing to the pod (its EndpointSlices)', () => {
    const pod: V1Pod = { metadata: { name: 'orders-0', uid: 'pod-2' } };
    const slice = (...endpoints: Array<{ uid: string; ready?: boolean }>): V1EndpointSlice => ({
      addressType: 'IPv4',
      endpoints: endpoints.map(({ uid, ready }) => ({
        addresses: ['10.0.0.5'],
        targetRef: { kind: 'Pod', name: 'orders-0', uid },
        ...(ready === undefined ? {} : { conditions: { ready } }),
      })),
    });
    const withSlices = (...slices: V1EndpointSlice[]): ObservedChildren => ({
      ...healthy,
      pod,
      clientEndpointSlices: slices,
    });

    it('is not Ready while the slice lists no ready endpoint of this pod, and says why', () => {
      for (const observed of [
        withSlices(slice()),
        withSlices(slice({ uid: 'pod-2', ready: false })),
        // The pod it replaced, with the same name: the slice has not caught up with the recreation.
        withSlices(slice({ uid: 'pod-1', ready: true })),
      ]) {
        const status = sampleDbStatus(resolveInstance(sampleDb()), observed, NOW);
        assert.equal(status.phase, 'Provisioning');
        const provisioned = conditionOf(status, 'Provisioned');
        assert.equal(provisioned.reason, 'ServiceNotRouting');
        assert.match(provisioned.message, /Service orders does not route to it yet/);
        assert.equal(conditionOf(status, 'Ready').reason, 'ServiceNotRouting');
      }
    });

    it('is Ready once a slice lists the pod as ready (an absent ready condition means ready)', () => {
      for (const observed of [
        withSlices(slice({ uid: 'pod-1', ready: false }), slice({ uid: 'pod-2', ready: true })),
        withSlices(slice({ uid: 'pod-2' })),
      ]) {
        assert.equal(sampleDbStatus(resolveInstance(sampleDb()), observed, NOW).phase, 'Ready');
      }
    });

    it('does not judge without slices (no EndpointSlice controller) or while a restore has stopped writes', () => {
      assert.equal(sampleDbStatus(resolveInstance(sampleDb()), withSlices(), NOW).phase, 'Ready');
      const stopped = sampleDb({}, { annotations: { [ANNOTATIONS.writesStopped]: '2026-01-01T00:00:00Z' } });
      assert.equal(
        conditionOf(sampleDbStatus(resolveInstance(stopped), withSlices(slice()), NOW), 'Provisioned').reason,
        'DatabaseReady',
      );
    });
  });

  it('is Pending before the StatefulSet exists', () => {
    const status = sampleDbStatus(resolveInstance(sampleDb()), { credentialsSecret: credentials }, NOW);
    assert.equal(status.phase, 'Pending');
    assert.equal(conditionOf(status, 'Ready').reason, 'StatefulSetPending');
  });

  it('is not Ready until the init Job succeeded', () => {
    const running = sampleDbStatus(resolveInstance(sampleDb()), { ...healthy, initJob: job([]) }, NOW);
    assert.equal(running.phase, 'Provisioning');
    assert.equal(conditionOf(running, 'Ready').reason, 'Initializing');
    assert.equal(conditionOf(running, 'Initialized').status, 'False');
  });

  it('is Failed when the init Job failed, quoting the Job reason and the last error, and says how to retry', () => {
    const failedPod: V1Pod = {
      metadata: { creationTimestamp: new Date('2026-01-01T00:00:00Z') },
      status: {
        containerStatuses: [
          {
            name: 'init',
            image: 'postgres',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 3, message: 'ERROR:  syntax error at or near "CRATE"' } },
          },
        ],
      },
    };
    const status = sampleDbStatus(
      resolveInstance(sampleDb()),
      {
        ...healthy,
        initJob: job([
          {
            type: 'Failed',
            status: 'True',
            reason: 'BackoffLimitExceeded',
            message: 'Job has reached the specified backoff limit',
          },
        ]),
        initJobPods: [failedPod],
      },
      NOW,
    );
    assert.equal(status.phase, 'Failed');
    const initialized = conditionOf(status, 'Initialized');
    assert.equal(initialized.status, 'False');
    assert.equal(initialized.reason, 'InitJobFailed');
    assert.match(initialized.message, /BackoffLimitExceeded/);
    assert.match(initialized.message, /syntax error at or near "CRATE"/);
    assert.match(initialized.message, /delete Job orders-init to retry/);
    assert.equal(conditionOf(status, 'Ready').reason, 'InitJobFailed');
  });

  it('recovers from Failed when the init Job later succeeds', () => {
    const failed = sampleDbStatus(
      resolveInstance(sampleDb()),
      { ...healthy, initJob: job([{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }]) },
      NOW,
    );
    const db: SampleDbObject = { ...sampleDb(), status: failed };
    const later = new Date('2026-01-01T01:00:00Z');
    const recovered = sampleDbStatus(resolveInstance(db), healthy, later);
    assert.equal(recovered.phase, 'Ready');
    assert.equal(conditionOf(recovered, 'Ready').lastTransitionTime, '2026-01-01T01:00:00Z');
    // Provisioned stayed True: its transition time is kept.
    assert.equal(conditionOf(recovered, 'Provisioned').lastTransitionTime, '2026-01-01T00:00:00Z');
  });

  it('is Updating while a spec change rolls out', () => {
    const rolling = sts(
      { readyReplicas: 1, observedGeneration: 2, updateRevision: 'r2', updatedReplicas: 0 },
      2,
    );
    const status = sampleDbStatus(resolveInstance(sampleDb()), { ...healthy, statefulSet: rolling }, NOW);
    assert.equal(status.phase, 'Updating');
    assert.equal(conditionOf(status, 'Ready').reason, 'RollingOut');
  });

  it('tells the user to create a missing user-supplied credentials Secret', () => {
    const db = sampleDb({ bootstrap: { credentialsSecret: { name: 'mine' } } });
    const status = sampleDbStatus(resolveInstance(db), { ...healthy, credentialsSecret: undefined }, NOW);
    assert.equal(status.phase, 'Pending');
    const ready = conditionOf(status, 'Ready');
    assert.equal(ready.reason, 'CredentialsSecretNotFound');
    assert.match(ready.message, /create it .* with keys "username" and "password"/);
  });

  it('fails on a credentials Secret without a password key', () => {
    const status = sampleDbStatus(
      resolveInstance(sampleDb()),
      { ...healthy, credentialsSecret: { data: { username: b64('app') } } },
      NOW,
    );
    assert.equal(status.phase, 'Failed');
    assert.equal(conditionOf(status, 'Ready').reason, 'CredentialsSecretInvalid');
  });

  it("fails on a credentials Secret whose username is not bootstrap.owner (the Secret is the owner's)", () => {
    const db = sampleDb({ bootstrap: { owner: 'shop', credentialsSecret: { name: 'mine' } } });
    const status = sampleDbStatus(
      resolveInstance(db),
      { ...healthy, credentialsSecret: { data: { username: b64('postgres'), password: b64('x') } } },
      NOW,
    );
    assert.equal(status.phase, 'Failed');
    const ready = conditionOf(status, 'Ready');
    assert.equal(ready.reason, 'CredentialsSecretInvalid');
    assert.match(ready.message, /username "postgres", but bootstrap.owner is "shop"/);
  });

  it('points at the bootstrap SQL ConfigMap when it is missing or lacks the key', () => {
    const db = sampleDb({ bootstrap: { initSQL: { name: 'orders-sql' } } });
    const missing = sampleDbStatus(resolveInstance(db), healthy, NOW);
    assert.equal(conditionOf(missing, 'Initialized').reason, 'InitSQLNotFound');
    assert.match(conditionOf(missing, 'Initialized').message, /ConfigMap orders-sql .* key "init.sql"/);
    const noKey = sampleDbStatus(
      resolveInstance(db),
      { ...healthy, initSqlConfigMap: { data: { 'other.sql': '' } } },
      NOW,
    );
    assert.equal(noKey.phase, 'Failed');
    assert.equal(conditionOf(noKey, 'Initialized').reason, 'InitSQLKeyNotFound');
    const present = sampleDbStatus(
      resolveInstance(db),
      { ...healthy, initSqlConfigMap: { data: { 'init.sql': 'select 1' } } },
      NOW,
    );
    assert.equal(present.phase, 'Ready');
  });

  it('explains a pending data volume', () => {
    const status = sampleDbStatus(
      resolveInstance(sampleDb()),
      { ...healthy, statefulSet: notReadySts, dataPvc: { status: { phase: 'Pending' } } },
      NOW,
    );
    const provisioned = conditionOf(status, 'Provisioned');
    assert.equal(provisioned.reason, 'VolumePending');
    assert.match(provisioned.message, /storageClassName/);
  });

  it('is Failed when the image cannot be pulled', () => {
    const pod: V1Pod = {
      status: {
        containerStatuses: [
          {
            name: 'postgres',
            image: 'postgres:99',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: {
              waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "postgres:99"' },
            },
          },
        ],
      },
    };
    const status = sampleDbStatus(
      resolveInstance(sampleDb()),
      { ...healthy, statefulSet: notReadySts, pod },
      NOW,
    );
    assert.equal(status.phase, 'Failed');
    assert.equal(conditionOf(status, 'Provisioned').reason, 'ImagePullBackOff');
    assert.match(conditionOf(status, 'Provisioned').message, /spec\.image/);
  });

  it('reports rejected postgresql parameters without blocking Ready', () => {
    const status = sampleDbStatus(
      resolveInstance(sampleDb({ postgresql: { parameters: { 'no good': '1' } } })),
      healthy,
      NOW,
    );
    assert.equal(status.phase, 'Ready');
    assert.equal(conditionOf(status, 'Configured').status, 'False');
    assert.match(conditionOf(status, 'Configured').message, /no good/);
  });

  it('is Deleting once the SampleDB has a deletionTimestamp', () => {
    const status = sampleDbStatus(
      resolveInstance(sampleDb({}, { deletionTimestamp: '2026-01-01T00:00:00Z' })),
      healthy,
      NOW,
    );
    assert.equal(status.phase, 'Deleting');
    assert.equal(conditionOf(status, 'Ready').status, 'False');
  });

  it('is Failed with the validation errors of a spec that slipped past admission', () => {
    const status = sampleDbStatus(
      resolveInstance(sampleDb()),
      { ...healthy, specErrors: [{ field: 'spec.version', message: 'bad' }] },
      NOW,
    );
    assert.equal(status.phase, 'Failed');
    assert.equal(conditionOf(status, 'Ready').reason, 'InvalidSpec');
    assert.match(conditionOf(status, 'Ready').message, /spec\.version: bad/);
  });
});
