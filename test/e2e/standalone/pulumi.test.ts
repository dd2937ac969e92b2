// Scenario 7: the Pulumi stack deploys onto a real node with image.build false and image.ref set to the operator
// image built on this machine, by its real digest; the operator it deployed runs (Pulumi waits for its rollout)
// and brings the stack's SampleDB to Ready with a real server. Its own real node: the shared one of the e2e tier
// runs dist/'s operator, and two operators must not manage the same SampleDBs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { Stack } from '@pulumi/pulumi/automation/index.js';
import { ControlPlane } from '../../../src/envtest/index.ts';
import { LOCAL_POSTGRES_REPOSITORY } from '../../../src/envtest/real-node/images.ts';
import { AttachedCluster } from '../../integration/support/cluster.ts';
import {
  awaitPulumiBuild,
  localStack,
  missingPulumiBinaries,
  SKIP_PULUMI_VARIABLE,
} from '../../support/pulumi.ts';
import { lockWaitMs, nodeLog } from '../support/cluster.ts';
import { kubectlJson, sql, waitReady } from '../support/sampledb.ts';

const OPERATION_TIMEOUT_MS = 8 * 60_000;
await awaitPulumiBuild();
const missing = missingPulumiBinaries();

if (missing.length > 0 && process.env[SKIP_PULUMI_VARIABLE] === '1') {
  test('pulumi stack on a real node', {
    skip: `${missing.join(', ')} not built and ${SKIP_PULUMI_VARIABLE}=1`,
  }, () => {});
} else {
  assert.deepEqual(
    missing,
    [],
    `pulumi binaries missing: run scripts/build-pulumi.sh (or set ${SKIP_PULUMI_VARIABLE}=1)`,
  );
  const plane = await ControlPlane.start({
    node: 'real',
    realNode: { lockWaitMs: lockWaitMs(), images: ['postgres-15', 'operator'] },
    log: nodeLog(),
  });
  const operatorImage = plane.node!.image('operator').refs.find((ref) => ref.includes('@sha256:'))!;
  const cluster = Object.assign(new AttachedCluster(plane.kubeconfigPath, plane.binDir), { operatorImage });
  const work = mkdtempSync(join(tmpdir(), 'sampledb-pulumi-real-'));
  const log: string[] = [];
  const onOutput = (out: string) => log.push(out);
  const tail = () => log.join('').slice(-6000);
  let stack: Stack | undefined;
  after(async () => {
    await stack?.destroy({ onOutput, signal: AbortSignal.timeout(OPERATION_TIMEOUT_MS) }).catch(() => {});
    await plane.stop();
    rmSync(work, { recursive: true, force: true });
  });

  describe('pulumi stack on a real node', { timeout: 20 * 60_000 }, () => {
    test('deploys the locally built operator by digest, which brings the SampleDB up on a real server', async () => {
      stack = await localStack({
        work,
        stackName: 'real-node',
        kubeconfig: plane.kubeconfigPath,
        config: {
          image: { build: false, ref: operatorImage },
          replicas: 1,
          postgresImageRepository: LOCAL_POSTGRES_REPOSITORY,
          instances: [
            {
              name: 'orders',
              namespace: 'pulumi-apps',
              spec: {
                version: '15',
                storage: { size: '1Gi' },
                deletion: { policy: 'Delete', protection: false },
              },
            },
          ],
        },
      });
      const up = await stack
        .up({ onOutput, signal: AbortSignal.timeout(OPERATION_TIMEOUT_MS) })
        .catch((err: unknown) => assert.fail(`pulumi up failed: ${String(err)}\n${tail()}`));
      assert.equal(up.summary.result, 'succeeded', tail());
      assert.equal(up.outputs.image?.value, operatorImage);
      const deployment = await kubectlJson<{
        spec: { template: { spec: { containers: { image: string }[] } } };
        status: { readyReplicas?: number };
      }>(cluster, ['get', 'deployment', 'sampledb-operator', '-n', 'sampledb-system']);
      assert.equal(deployment?.spec.template.spec.containers[0]?.image, operatorImage);
      assert.equal(deployment?.status.readyReplicas, 1, 'the real operator pod is Ready');
      const status = await waitReady(cluster, 'pulumi-apps', 'orders');
      const version = await sql(cluster, 'pulumi-apps', 'orders', 'SHOW server_version;');
      assert.equal(status.currentVersion, version.split(' ')[0]);
    });
  });
}
