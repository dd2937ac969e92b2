import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { VersionApi } from '@kubernetes/client-node';
import { sharedCluster } from '../support/cluster.ts';

const cluster = await sharedCluster();

async function moduleKubernetesVersion(): Promise<string> {
  const goMod = await readFile(new URL('../../controlplane/k8s/go.mod', import.meta.url), 'utf8');
  const match = /^\s*(?:require\s+)?k8s\.io\/kubernetes\s+(v\S+)/m.exec(goMod);
  assert.ok(match?.[1], 'test/controlplane/k8s/go.mod requires k8s.io/kubernetes');
  return match[1];
}

test('/version reports the Kubernetes release the Go module pins', async () => {
  const expected = await moduleKubernetesVersion();
  assert.equal(expected, 'v1.36.3');
  const version = await cluster.kubeConfig().makeApiClient(VersionApi).getCode();
  assert.equal(version.gitVersion, expected);
  assert.equal(version.major, '1');
  assert.equal(version.minor, '36');
});

test('kubectl talks to the control plane with the admin kubeconfig', async () => {
  const result = await cluster.kubectl(['auth', 'can-i', '*', '*', '--all-namespaces']);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout.trim(), 'yes');
});
