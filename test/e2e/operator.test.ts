// Scenario 1: dist/ applied as a user would (see support/install.ts) runs the operator as the real Deployment: both
// replicas become Ready through their real probes, under the synthesized ServiceAccount and RBAC, one holds the
// leader Lease, and nothing they asked the apiserver for was forbidden.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LEADER_ELECTION_LEASE } from '../../src/api/index.ts';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eCluster } from './support/cluster.ts';
import { OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE } from './support/install.ts';
import { kubectlJson, kubectlOk } from './support/sampledb.ts';

const cluster = await e2eCluster();

interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { serviceAccountName?: string; containers: { image: string; readinessProbe?: object }[] };
  status: { conditions?: { type: string; status: string }[]; containerStatuses?: { imageID?: string }[] };
}

describe('the operator from dist/ on a real node', () => {
  it('runs two Ready replicas from the locally built image, under the synthesized ServiceAccount', async () => {
    // Polled: another file's fault test may just have killed the leader (files run two at a time).
    await pollUntil(
      'two Ready operator replicas',
      async () => {
        const deployment = await kubectlJson<{ status: { readyReplicas?: number; replicas?: number } }>(
          cluster,
          ['get', 'deployment', OPERATOR_DEPLOYMENT, '-n', OPERATOR_NAMESPACE],
        );
        return deployment?.status.readyReplicas === 2 && deployment.status.replicas === 2 ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const pods = await kubectlJson<{ items: Pod[] }>(cluster, [
      'get',
      'pods',
      '-n',
      OPERATOR_NAMESPACE,
      '-l',
      'app.kubernetes.io/name=sampledb-operator',
    ]);
    const running = (pods?.items ?? []).filter((pod) => !pod.metadata.deletionTimestamp);
    assert.equal(running.length, 2);
    for (const pod of running) {
      assert.equal(pod.spec.serviceAccountName, OPERATOR_DEPLOYMENT);
      assert.ok(
        pod.spec.containers[0]?.readinessProbe,
        'the readiness probe from dist/ is what made it Ready',
      );
      assert.equal(pod.status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
      // The image ran is the one built from this checkout (its digest is what the node imported).
      assert.equal(pod.status.containerStatuses?.[0]?.imageID, cluster.operatorImage);
    }
  });

  it('elects one leader through the Lease and is never refused by the apiserver', async () => {
    const lease = await kubectlJson<{ spec: { holderIdentity?: string } }>(cluster, [
      'get',
      'lease',
      LEADER_ELECTION_LEASE,
      '-n',
      OPERATOR_NAMESPACE,
    ]);
    assert.match(lease?.spec.holderIdentity ?? '', new RegExp(`^${OPERATOR_DEPLOYMENT}-`));
    const logs = await kubectlOk(cluster, [
      'logs',
      '-n',
      OPERATOR_NAMESPACE,
      '-l',
      'app.kubernetes.io/name=sampledb-operator',
      '--tail=-1',
      '--prefix',
    ]);
    assert.ok(logs.includes('sampledb-operator starting'), logs.slice(0, 2000));
    // An RBAC denial reads "<resource> is forbidden: User ... cannot <verb> ...". (A namespace being deleted also
    // answers 403, "unable to create new content": not a permission, and other files' namespaces do go away.)
    const refused = logs
      .split('\n')
      .filter((line) => /forbidden: User \\?"system:serviceaccount:/.test(line));
    assert.deepEqual(refused, []);
  });
});
