// Issue 12 on the real node, a minor upgrade: a SampleDB on localhost/postgres:15 with rows gets spec.image
// localhost/postgres:15-rebuilt (the same PostgreSQL under another digest, scripts/build-images.sh). The StatefulSet
// rolls the pod onto it, gated on readiness; the version Job confirms the server; Upgrading ends UpToDate; the data
// is intact and the pod runs the new digest.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { pollUntil } from '../../src/envtest/index.ts';
import { LOCAL_POSTGRES_REPOSITORY } from '../../src/envtest/real-node/images.ts';
import { e2eSetup } from './support/cluster.ts';
import {
  apply,
  conditionOf,
  eventMessages,
  kubectlJson,
  patchSpec,
  SEED_SQL,
  sampleDb,
  sql,
  statusOf,
  tableChecksums,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-minor');
const name = 'rolling';
const REBUILT = `${LOCAL_POSTGRES_REPOSITORY}:15-rebuilt`;

const podOf = () => kubectlJson<V1Pod>(cluster, ['get', 'pod', `${name}-0`, '-n', namespace]);

describe('minor upgrade on a real node', () => {
  it('rolls the pod onto a new digest of 15: verified, UpToDate, same rows', async () => {
    await apply(cluster, [sampleDb(namespace, name, { version: '15', storage: { size: '1Gi' } })]);
    const before = await waitReady(cluster, namespace, name);
    assert.match(before.currentVersion ?? '', /^15\./);
    await sql(cluster, namespace, name, SEED_SQL);
    const checksums = await tableChecksums(cluster, namespace, name);
    const oldPod = await podOf();
    const oldImageId = oldPod?.status?.containerStatuses?.find((c) => c.name === 'postgres')?.imageID;
    assert.ok(oldImageId);

    await patchSpec(cluster, namespace, name, { image: REBUILT });
    const reasons = new Set<string>();
    const done = await pollUntil(
      'the pod runs the rebuilt image and the version is confirmed',
      async () => {
        const s = await statusOf(cluster, namespace, name);
        const upgrading = conditionOf(s, 'Upgrading');
        if (upgrading?.reason) reasons.add(upgrading.reason);
        const pod = await podOf();
        const running = pod?.status?.containerStatuses?.find((c) => c.name === 'postgres');
        return running?.image.endsWith(':15-rebuilt') && upgrading?.status === 'False' && s.phase === 'Ready'
          ? { status: s, pod: pod as V1Pod, upgrading }
          : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
    );
    assert.equal(done.upgrading.reason, 'UpToDate', done.upgrading.message);
    assert.notEqual(done.pod.metadata?.uid, oldPod?.metadata?.uid, 'the pod was replaced');
    const newImageId = done.pod.status?.containerStatuses?.find((c) => c.name === 'postgres')?.imageID;
    assert.ok(newImageId && newImageId !== oldImageId, `a new digest: ${oldImageId} -> ${newImageId}`);
    assert.match(done.status.currentVersion ?? '', /^15\./);
    assert.equal(done.status.currentVersion, before.currentVersion, 'the same minor');
    assert.deepEqual(await tableChecksums(cluster, namespace, name), checksums);
    const notes = await eventMessages(cluster, namespace, 'UpgradeStep');
    assert.ok(
      notes.some((n) => n.startsWith('Step RollingRestart') && n.includes(REBUILT)),
      `a RollingRestart step Event: ${notes.join(' | ')}`,
    );
    assert.ok(
      notes.some((n) => n.includes(`runs image ${REBUILT}`)),
      'a VerifyVersion step Event',
    );
    process.stderr.write(`minor upgrade: reasons seen ${[...reasons].join(' ')}\n`);
  });
});
