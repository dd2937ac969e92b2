import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assetVariable, locateBinaries } from '../../../src/envtest/binaries.ts';

let assets: string;
let other: string;

before(async () => {
  assets = await mkdtemp(join(tmpdir(), 'assets-'));
  other = await mkdtemp(join(tmpdir(), 'other-'));
  for (const [dir, name] of [
    [assets, 'kube-apiserver'],
    [assets, 'etcd'],
    [assets, 'kubectl'],
    [other, 'my-etcd'],
  ] as const) {
    await writeFile(join(dir, name), '#!/bin/sh\n');
    await chmod(join(dir, name), 0o755);
  }
});

after(async () => {
  await rm(assets, { recursive: true, force: true });
  await rm(other, { recursive: true, force: true });
});

test('asset variables follow setup-envtest naming', () => {
  assert.equal(assetVariable('kube-apiserver'), 'TEST_ASSET_KUBE_APISERVER');
  assert.equal(assetVariable('kube-controller-manager'), 'TEST_ASSET_KUBE_CONTROLLER_MANAGER');
  assert.equal(assetVariable('etcd'), 'TEST_ASSET_ETCD');
});

test('KUBEBUILDER_ASSETS supplies binaries, and TEST_ASSET_<NAME> wins over it', async () => {
  const found = await locateBinaries({
    names: ['kube-apiserver', 'etcd', 'kubectl'],
    env: { KUBEBUILDER_ASSETS: assets, TEST_ASSET_ETCD: join(other, 'my-etcd') },
  });
  assert.deepEqual(found, {
    'kube-apiserver': join(assets, 'kube-apiserver'),
    etcd: join(other, 'my-etcd'),
    kubectl: join(assets, 'kubectl'),
  });
});

test('a TEST_ASSET_<NAME> that is not an executable is an error, not a silent fallback', async () => {
  await assert.rejects(
    locateBinaries({ names: ['etcd'], env: { TEST_ASSET_ETCD: join(other, 'missing') } }),
    /TEST_ASSET_ETCD=.*missing is not an executable/,
  );
});
