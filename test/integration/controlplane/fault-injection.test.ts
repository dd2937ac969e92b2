import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { after, test } from 'node:test';
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { ControlPlane } from '../../../src/envtest/index.ts';

// Its own control plane: these tests stop, pause and compact it. Without the watch cache every read goes
// to etcd, so compaction is observable right away as 410 Gone.
const plane = await ControlPlane.start({ apiserverArgs: ['--watch-cache=false'] });
after(() => plane.stop());
const core = plane.kubeConfig().makeApiClient(CoreV1Api);

function statusOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

test('restartApiserver() keeps the stored data (same etcd)', async () => {
  const created = await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'survivor' }, data: { answer: '42' } },
  });
  await plane.restartApiserver();
  const read = await core.readNamespacedConfigMap({ name: 'survivor', namespace: 'default' });
  assert.equal(read.data?.answer, '42');
  assert.equal(read.metadata?.uid, created.metadata?.uid);
  assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
});

test('pauseApiserver() leaves requests unanswered until resumeApiserver()', async () => {
  const readyz = () => plane.kubectl(['get', '--raw=/readyz', '--request-timeout=1s']);
  assert.equal((await readyz()).code, 0);
  plane.pauseApiserver();
  try {
    const paused = await readyz();
    assert.notEqual(paused.code, 0);
    assert.match(paused.stderr, /timeout|deadline|Timeout/);
  } finally {
    plane.resumeApiserver();
  }
  assert.equal((await readyz()).code, 0);
});

test('compactEtcd() makes older resourceVersions answer 410 Gone', async () => {
  const first = await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'compacted' }, data: { v: '1' } },
  });
  const oldVersion = first.metadata!.resourceVersion!;
  await core.replaceNamespacedConfigMap({
    name: 'compacted',
    namespace: 'default',
    body: { ...first, data: { v: '2' } },
  });
  const listAt = () =>
    core.listNamespacedConfigMap({
      namespace: 'default',
      resourceVersion: oldVersion,
      resourceVersionMatch: 'Exact',
    });
  const before = await listAt();
  assert.ok(before.items.some((c) => c.metadata?.name === 'compacted'));

  await plane.compactEtcd();
  await assert.rejects(listAt(), (error: unknown) => {
    assert.equal(statusOf(error), 410, String(error));
    return true;
  });
});

test('stop() ends every process and removes its temp dir; a second stop() is harmless', async () => {
  const workDir = dirname(plane.kubeconfigPath);
  assert.ok(existsSync(workDir));
  await plane.stop();
  await plane.stop();
  assert.equal(existsSync(workDir), false);
  const port = Number(new URL(plane.server).port);
  await assert.rejects(
    new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', reject);
    }),
    /ECONNREFUSED/,
  );
  assert.throws(() => plane.pauseApiserver(), /not running/);
});
