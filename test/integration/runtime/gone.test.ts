import { after, before, describe, it } from 'node:test';
import { ControlPlane, pollUntil } from '../../../src/envtest/index.ts';
import { isStatus } from '../../../src/runtime/http.ts';
import { CuttableProxy, configMaps, isEffect, kubeconfigVia, OperatorProcess, TestKube } from './helpers.ts';

// Real kube-apiserver + etcd. The watch cache is off so a resumed watch reads etcd directly, where compaction
// turns the old resourceVersion into 410 Gone. The operator reaches the apiserver through a proxy we can cut.

let plane: ControlPlane;

before(async () => {
  plane = await ControlPlane.start({ apiserverArgs: ['--watch-cache=false'] });
});

after(async () => {
  await plane?.stop();
});

describe('410 Gone recovery', { timeout: 300_000 }, () => {
  it('relists after compaction and does not lose a delete that happened while disconnected', async () => {
    const kube = new TestKube(plane, 'gone');
    await kube.createNamespace();
    for (const n of ['keep', 'doomed', 'changed']) await kube.putSource(n, { v: '1' });
    const proxy = new CuttableProxy(Number(new URL(plane.server).port));
    const kubeconfig = await kubeconfigVia(plane, await proxy.start());
    const op = new OperatorProcess({ kubeconfig, namespace: 'gone', identity: 'op-gone' });
    try {
      await kube.waitConverged(30_000);
      // At least as new as anything the operator has seen.
      const seen = (await kube.http.list(configMaps, { namespace: 'gone' })).metadata.resourceVersion!;
      proxy.cut();
      await kube.deleteSource('doomed');
      await kube.putSource('changed', { v: '2' });
      // Push etcd's revision well past the operator's last resourceVersion, then drop that history.
      for (let i = 0; i < 20; i++) await kube.putSource('filler', { i: String(i) });
      await kube.deleteSource('filler');
      await plane.compactEtcd();
      // The precondition, checked rather than waited for: reading at the operator's last version is 410 Gone now.
      await pollUntil(
        'the seen resourceVersion compacted away',
        async () => {
          try {
            await kube.http.request('GET', '/api/v1/namespaces/gone/configmaps', {
              query: { resourceVersion: seen, resourceVersionMatch: 'Exact' },
            });
            return undefined;
          } catch (err) {
            if (isStatus(err, 410)) return true;
            throw err;
          }
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      proxy.restore();
      await op.waitForLog('410 relist', (l) => l.msg === 'watch resourceVersion expired; relisting', 60_000);
      await kube.waitConverged(60_000);
      // The operator made that delete (nothing else deletes here). Its log line can reach us after the apiserver
      // shows the object gone, so it is waited for rather than looked up.
      await op.waitForLog(
        'the delete of doomed-out',
        (l) => isEffect(l) && l.effect === 'delete' && l.key === 'gone/doomed-out',
        30_000,
      );
    } finally {
      await op.stop();
      await proxy.stop();
      await kube.close();
    }
  });
});
