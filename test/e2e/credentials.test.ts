// Credentials on a real node: applications get the owner, which is no superuser, and never the superuser's
// password; a password changed in the credentials Secret reaches the role (the old one stops working) and then the
// binding Secret.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import {
  apply,
  kubectlJson,
  kubectlOk,
  runClient,
  sampleDb,
  sql,
  statusOf,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-creds');
const name = 'creds';
const NEW_PASSWORD = 'rotated0password0on0the0real0node0xyz';

type SecretJson = { data?: Record<string, string> };
const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');
const secret = (secretName: string) =>
  kubectlJson<SecretJson>(cluster, ['get', 'secret', secretName, '-n', namespace]);

describe('credentials on a real node', () => {
  it('the binding logs in as the owner, which is not a superuser, and carries nothing of the superuser', async () => {
    await apply(cluster, [sampleDb(namespace, name, { version: '15', storage: { size: '1Gi' } })]);
    await waitReady(cluster, namespace, name);
    assert.equal(
      await sql(
        cluster,
        namespace,
        name,
        'SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user;',
      ),
      'app|f',
    );
    const superuser = decode((await secret(`${name}-superuser`))?.data?.password);
    assert.ok(superuser.length >= 32);
    const binding = Object.values((await secret(`${name}-binding`))?.data ?? {}).map(decode);
    const connection = JSON.stringify(await kubectlJson(cluster, ['get', 'configmaps', '-n', namespace]));
    const status = JSON.stringify(await statusOf(cluster, namespace, name));
    for (const published of [...binding, connection, status]) assert.ok(!published.includes(superuser));
  });

  it('a new password in the credentials Secret reaches the role, then the binding; the old one stops working', async () => {
    const oldUri = decode((await secret(`${name}-binding`))?.data?.uri);
    await kubectlOk(cluster, [
      'patch',
      'secret',
      `${name}-credentials`,
      '-n',
      namespace,
      '--type=merge',
      '-p',
      JSON.stringify({ stringData: { password: NEW_PASSWORD } }),
    ]);
    await pollUntil(
      'the binding Secret carries the new password',
      async () =>
        decode((await secret(`${name}-binding`))?.data?.password) === NEW_PASSWORD ? true : undefined,
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    const applied = (await statusOf(cluster, namespace, name)).conditions?.find(
      (c) => c.type === 'CredentialsApplied',
    );
    assert.equal(applied?.status, 'True', applied?.message);
    // The new binding works (its URI is read by the client pod), the old URI is refused.
    assert.equal(await sql(cluster, namespace, name, 'SELECT current_user;'), 'app');
    const old = await runClient(cluster, namespace, name, `psql '${oldUri}' -X -At -c 'SELECT 1'`);
    assert.equal(old.phase, 'Failed', old.logs);
    assert.match(old.logs, /password authentication failed for user "app"/);
  });
});
