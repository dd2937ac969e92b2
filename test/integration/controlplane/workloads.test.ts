import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';
import { pollUntil } from '../../../src/envtest/index.ts';
import { sharedCluster, testNamespace } from '../support/cluster.ts';

const cluster = await sharedCluster();
const kubeConfig = cluster.kubeConfig();
const core = kubeConfig.makeApiClient(CoreV1Api);
const apps = kubeConfig.makeApiClient(AppsV1Api);
const batch = kubeConfig.makeApiClient(BatchV1Api);
const namespace = await testNamespace(cluster, 'workloads');
const wait = { timeoutMs: 60_000, intervalMs: 200 };

function podTemplate(app: string, restartPolicy?: string): V1PodTemplateSpec {
  return {
    metadata: { labels: { app } },
    spec: {
      restartPolicy,
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
    },
  };
}

test('a StatefulSet with a volumeClaimTemplate reaches its ready replicas on the fake node', async () => {
  await apps.createNamespacedStatefulSet({
    namespace,
    body: {
      metadata: { name: 'db' },
      spec: {
        replicas: 2,
        serviceName: 'db',
        selector: { matchLabels: { app: 'db' } },
        template: podTemplate('db'),
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
    },
  });
  const status = await pollUntil(
    'StatefulSet db ready',
    async () => {
      const sts = await apps.readNamespacedStatefulSet({ name: 'db', namespace });
      return sts.status?.readyReplicas === 2 ? sts.status : undefined;
    },
    wait,
  );
  assert.equal(status.availableReplicas, 2);
  const claims = await core.listNamespacedPersistentVolumeClaim({ namespace });
  assert.deepEqual(claims.items.map((c) => c.metadata?.name).sort(), ['data-db-0', 'data-db-1']);
  for (const claim of claims.items) {
    assert.equal(claim.status?.phase, 'Bound');
    assert.equal(claim.spec?.storageClassName, 'standard', 'the default StorageClass applies');
  }
  const pods = await core.listNamespacedPod({ namespace, labelSelector: 'app=db' });
  for (const pod of pods.items) {
    assert.equal(pod.status?.phase, 'Running');
    assert.equal(pod.spec?.nodeName, 'kwok-node-0', 'kube-scheduler placed the pod on the fake node');
  }
});

test('growing a bound claim is reflected in its capacity (allowVolumeExpansion)', async () => {
  await pollUntil(
    'claim data-db-0 bound',
    async () => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ name: 'data-db-0', namespace });
      return claim.status?.phase === 'Bound' ? true : undefined;
    },
    wait,
  );
  await core.patchNamespacedPersistentVolumeClaim(
    { name: 'data-db-0', namespace, body: { spec: { resources: { requests: { storage: '2Gi' } } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  const capacity = await pollUntil(
    'claim data-db-0 resized',
    async () => {
      const claim = await core.readNamespacedPersistentVolumeClaim({ name: 'data-db-0', namespace });
      return claim.status?.capacity?.storage === '2Gi' ? claim.status.capacity.storage : undefined;
    },
    wait,
  );
  assert.equal(capacity, '2Gi');
});

test('a Job completes', async () => {
  await batch.createNamespacedJob({
    namespace,
    body: {
      metadata: { name: 'once' },
      spec: { backoffLimit: 0, template: podTemplate('once', 'Never') },
    },
  });
  const job = await pollUntil(
    'Job once complete',
    async () => {
      const current = await batch.readNamespacedJob({ name: 'once', namespace });
      const complete = current.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');
      return complete ? current : undefined;
    },
    wait,
  );
  assert.equal(job.status?.succeeded, 1);
  assert.equal(job.status?.failed ?? 0, 0);
});

test('deleting an owner garbage-collects its dependents', async () => {
  const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'owner' } } });
  await core.createNamespacedConfigMap({
    namespace,
    body: {
      metadata: {
        name: 'dependent',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }],
      },
    },
  });
  await apps.createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name: 'web' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: podTemplate('web') },
    },
  });
  await pollUntil(
    'Deployment web available',
    async () => {
      const deployment = await apps.readNamespacedDeployment({ name: 'web', namespace });
      return deployment.status?.availableReplicas === 1 ? true : undefined;
    },
    wait,
  );
  assert.equal((await core.listNamespacedPod({ namespace, labelSelector: 'app=web' })).items.length, 1);

  await core.deleteNamespacedConfigMap({ name: 'owner', namespace });
  await apps.deleteNamespacedDeployment({ name: 'web', namespace, propagationPolicy: 'Background' });

  await pollUntil(
    'dependent ConfigMap collected',
    async () => {
      const names = (await core.listNamespacedConfigMap({ namespace })).items.map((c) => c.metadata?.name);
      return names.includes('dependent') ? undefined : true;
    },
    wait,
  );
  await pollUntil(
    'ReplicaSet and pod of Deployment web collected',
    async () => {
      const replicaSets = await apps.listNamespacedReplicaSet({ namespace, labelSelector: 'app=web' });
      const pods = await core.listNamespacedPod({ namespace, labelSelector: 'app=web' });
      return replicaSets.items.length === 0 && pods.items.length === 0 ? true : undefined;
    },
    wait,
  );
});
