import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { adminKubeconfig } from '../../../src/envtest/kubeconfig.ts';

const credentials = {
  server: 'https://127.0.0.1:6443',
  caData: Buffer.from('-----BEGIN CERTIFICATE-----\nca\n'.repeat(40)).toString('base64'),
  certData: Buffer.from('cert').toString('base64'),
  keyData: Buffer.from('key').toString('base64'),
};

describe('adminKubeconfig', () => {
  it('is a kubeconfig client-node loads: one cluster, user and context, current', () => {
    const kc = new KubeConfig();
    kc.loadFromString(adminKubeconfig(credentials));
    assert.equal(kc.getCurrentContext(), 'envtest');
    assert.deepEqual(
      { server: kc.getCurrentCluster()?.server, caData: kc.getCurrentCluster()?.caData },
      { server: credentials.server, caData: credentials.caData },
    );
    const user = kc.getCurrentUser();
    assert.equal(user?.name, 'envtest-admin');
    assert.equal(user?.certData, credentials.certData);
    assert.equal(user?.keyData, credentials.keyData);
    assert.equal(kc.getContextObject('envtest')?.namespace, 'default');
  });

  it('keeps long certificate data on one line and quotes names YAML would misread', () => {
    const text = adminKubeconfig(credentials, 'yes: no #1');
    assert.ok(
      text.split('\n').some((line) => line.endsWith(credentials.caData)),
      'the CA data is not folded',
    );
    const parsed = parse(text) as { 'current-context': string; users: { name: string }[] };
    assert.equal(parsed['current-context'], 'yes: no #1');
    assert.equal(parsed.users[0]?.name, 'yes: no #1-admin');
  });
});
