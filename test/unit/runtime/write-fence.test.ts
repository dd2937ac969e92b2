// The write fence of KubeHttp (no apiserver: the kubeconfig points at a closed port, so anything that is sent fails
// with a connection error and anything the fence stops fails with WriteFencedError before a connection is tried).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeHttp, WriteFencedError } from '../../../src/runtime/http.ts';
import { CONFIG_MAPS, LEASES } from '../../../src/runtime/kinds.ts';

function closedPortHttp(): KubeHttp {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeHttp(kc, { requestTimeoutMs: 2000 });
}

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' } };

describe('KubeHttp write fence', () => {
  it('refuses every write while closed, before sending; reads and the Lease writes still go', async () => {
    const http = closedPortHttp();
    let why: string | undefined = 'lease may have passed';
    http.setWriteFence(() => why);
    const ref = { namespace: 'ns', name: 'a' };
    for (const write of [
      () => http.create(CONFIG_MAPS, configMap),
      () => http.apply(CONFIG_MAPS, configMap, { fieldManager: 'test' }),
      () => http.patch(CONFIG_MAPS, ref, {}, 'merge'),
      () => http.delete(CONFIG_MAPS, ref),
    ]) {
      await assert.rejects(
        write(),
        (err) => err instanceof WriteFencedError && /lease may have passed/.test(err.message),
      );
    }
    assert.throws(() => http.assertMayWrite('pg_promote on db-1'), WriteFencedError);
    const sent = (err: unknown) => !(err instanceof WriteFencedError);
    await assert.rejects(http.get(CONFIG_MAPS, ref), sent, 'a read is sent (and fails to connect)');
    await assert.rejects(http.create(LEASES, { ...configMap, kind: 'Lease' }, { unfenced: true }), sent);
    why = undefined;
    await assert.rejects(http.create(CONFIG_MAPS, configMap), sent, 'open again: sent');
    assert.doesNotThrow(() => http.assertMayWrite('pg_promote on db-1'));
    await http.close();
  });
});
