// How the operator reaches the apiserver, without client-node: kubeconfig documents and the pod's ServiceAccount
// mount, read from temporary directories (no cluster).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import {
  accessFromKubeConfigLike,
  accessFromKubeconfig,
  inClusterAccess,
  kubeconfigFileAccess,
} from '../../../src/runtime/cluster-access.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function doc(user: Record<string, unknown>, cluster: Record<string, unknown> = {}) {
  return {
    'current-context': 'dev',
    contexts: [
      { name: 'other', context: { cluster: 'nowhere', user: 'nobody' } },
      { name: 'dev', context: { cluster: 'c1', user: 'u1' } },
    ],
    clusters: [{ name: 'c1', cluster: { server: 'https://10.0.0.1:6443/', ...cluster } }],
    users: [{ name: 'u1', user }],
  };
}

describe('accessFromKubeconfig', () => {
  const files: Record<string, string> = { '/cfg/ca.pem': 'CA FROM FILE', '/abs/key.pem': 'KEY FROM FILE' };
  const readText = (p: string) => {
    const text = files[p];
    if (text === undefined) throw new Error(`ENOENT ${p}`);
    return text;
  };
  const opts = { baseDir: '/cfg', readText };

  it('takes the current context: server without trailing slash, inline CA and client certificate', async () => {
    const access = accessFromKubeconfig(
      doc(
        { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
        {
          'certificate-authority-data': b64('CA'),
        },
      ),
      opts,
    );
    assert.equal(access.server, 'https://10.0.0.1:6443');
    assert.deepEqual(access.tls, { ca: 'CA', cert: 'CERT', key: 'KEY' });
    assert.deepEqual(await access.credentials(), {});
  });

  it('resolves relative file paths against the kubeconfig directory, absolute ones as they are', () => {
    const access = accessFromKubeconfig(
      doc({ 'client-key': '/abs/key.pem' }, { 'certificate-authority': 'ca.pem' }),
      opts,
    );
    assert.deepEqual(access.tls, { ca: 'CA FROM FILE', key: 'KEY FROM FILE' });
  });

  it('sends a bearer token, or basic auth, and honours insecure-skip-tls-verify and tls-server-name', async () => {
    const token = accessFromKubeconfig(
      doc({ token: 's3cret' }, { 'insecure-skip-tls-verify': true, 'tls-server-name': 'kubernetes' }),
      opts,
    );
    assert.deepEqual(await token.credentials(), { Authorization: 'Bearer s3cret' });
    assert.deepEqual(token.tls, { insecureSkipTlsVerify: true, serverName: 'kubernetes' });
    const basic = accessFromKubeconfig(doc({ username: 'admin', password: 'pw' }), opts);
    assert.deepEqual(await basic.credentials(), { Authorization: `Basic ${b64('admin:pw')}` });
  });

  it('uses a named context over the current one', () => {
    assert.throws(
      () => accessFromKubeconfig(doc({}), { ...opts, contextName: 'other' }),
      /cluster "nowhere" of context "other" not found/,
    );
  });

  for (const [what, document, message] of [
    ['no current-context', { contexts: [] }, /no current-context/],
    ['a missing context', { 'current-context': 'gone' }, /context "gone" not found/],
    ['a cluster without server', doc({}, { server: '' }), /cluster "c1" has no server/],
    ['an exec plugin', doc({ exec: { command: 'aws' } }), /user "u1" uses an exec credential plugin/],
    [
      'an auth-provider',
      doc({ 'auth-provider': { name: 'oidc' } }),
      /uses an auth-provider credential plugin/,
    ],
    ['not an object', 'just text', /no current-context/],
  ] as const) {
    it(`refuses ${what} with a message that names it`, () => {
      assert.throws(() => accessFromKubeconfig(document, opts), message);
    });
  }
});

describe('the pod ServiceAccount and kubeconfig files on disk', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cluster-access-'));
    await writeFile(join(dir, 'ca.crt'), 'CLUSTER CA');
    await writeFile(join(dir, 'token'), 'token-1\n');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('in a cluster: the kubernetes Service address, the mounted CA, and the token as it is now', async () => {
    const access = inClusterAccess(
      { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
      dir,
    );
    assert.equal(access.server, 'https://10.96.0.1:443');
    assert.deepEqual(access.tls, { ca: 'CLUSTER CA' });
    assert.deepEqual(await access.credentials(), { Authorization: 'Bearer token-1' });
    // The kubelet rotates bound tokens in place; the next read follows.
    await writeFile(join(dir, 'token'), 'token-2');
    assert.deepEqual(await access.credentials(), { Authorization: 'Bearer token-2' });
  });

  it('in a cluster on IPv6: the address is bracketed', () => {
    const access = inClusterAccess(
      { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      dir,
    );
    assert.equal(access.server, 'https://[fd00::1]:443');
  });

  it('outside a cluster without KUBECONFIG: says what to set', () => {
    assert.throws(() => inClusterAccess({}, dir), /KUBERNETES_SERVICE_HOST .* unset \(set KUBECONFIG/);
  });

  it('a YAML kubeconfig file with a tokenFile next to it', async () => {
    const path = join(dir, 'config');
    await writeFile(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: dev',
        'contexts: [{name: dev, context: {cluster: c1, user: u1}}]',
        'clusters: [{name: c1, cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}}]',
        'users: [{name: u1, user: {tokenFile: token}}]',
      ].join('\n'),
    );
    const access = await kubeconfigFileAccess(path);
    assert.deepEqual(access.tls, { ca: 'CLUSTER CA' });
    assert.deepEqual(await access.credentials(), { Authorization: 'Bearer token-2' });
  });

  it('a client-node KubeConfig a test holds gives the same access, including loadFromCluster', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1', caData: b64('CA'), skipTLSVerify: false }],
      users: [{ name: 'u', certData: b64('CERT'), keyData: b64('KEY') }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const access = accessFromKubeConfigLike(kc);
    assert.equal(access.server, 'https://127.0.0.1:1');
    assert.deepEqual(access.tls, { ca: 'CA', cert: 'CERT', key: 'KEY' });

    // What loadFromCluster() records: the CA file and the token as a "tokenFile" auth provider.
    const inPod = new KubeConfig();
    inPod.loadFromClusterAndUser(
      {
        name: 'inCluster',
        server: 'https://10.96.0.1:443',
        caFile: join(dir, 'ca.crt'),
        skipTLSVerify: false,
      },
      {
        name: 'inClusterUser',
        authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } },
      },
    );
    const fromPod = accessFromKubeConfigLike(inPod);
    assert.equal(fromPod.server, 'https://10.96.0.1:443');
    assert.deepEqual(fromPod.tls, { ca: 'CLUSTER CA' });
    assert.deepEqual(await fromPod.credentials(), { Authorization: 'Bearer token-2' });
  });
});
