// The superuser stays out of everything applications get, and a changed owner password reaches the binding only
// after the Job that gives it to the role succeeded (on the fake apiserver: the steps' writes, no controllers).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1Secret } from '@kubernetes/client-node';
import { silentLogger } from '../../../src/runtime/index.ts';
import { passwordFingerprint } from '../../../src/sampledb/credentials.ts';
import { decidePublishedPassword, ownerPasswordJobName } from '../../../src/sampledb/owner-password.ts';
import { SampleDbReconciler } from '../../../src/sampledb/reconciler.ts';
import { CONFIGMAPS, JOBS, SAMPLEDBS, SECRETS, STATEFULSETS } from '../../../src/sampledb/resources.ts';
import { sampleDb } from '../../support/sampledb.ts';
import { FakeApiserver } from './support/fake-apiserver.ts';

const REQ = { namespace: 'shop', name: 'orders' };
const rc = () => ({ signal: new AbortController().signal, log: silentLogger, reconcileID: 't', retries: 0 });
const b64 = (v: string) => Buffer.from(v, 'utf8').toString('base64');
const unb64 = (v: string | undefined) => Buffer.from(v ?? '', 'base64').toString('utf8');

async function reconcile(api: FakeApiserver) {
  const { client, view, now } = api.operator();
  await new SampleDbReconciler({ client, view, now }).reconcile(REQ, rc());
}

function password(api: FakeApiserver, secret: string): string {
  return unb64(api.get(SECRETS, 'shop', secret)?.data?.password);
}

function succeed(api: FakeApiserver, rt: typeof JOBS, name: string) {
  const job = api.get(rt, 'shop', name) as V1Job;
  assert.ok(job, `Job ${name} exists`);
  api.put(JOBS, { ...job, status: { succeeded: 1 } });
}

const condition = (api: FakeApiserver, type: string) =>
  api.get(SAMPLEDBS, 'shop', 'orders')?.status?.conditions?.find((c) => c.type === type);

describe('owner and superuser credentials', () => {
  it('hands applications the owner only: no superuser password in the binding, ConfigMaps or status', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb({ bootstrap: { owner: 'shop' } }));
    await reconcile(api);
    const superuser = api.get(SECRETS, 'shop', 'orders-superuser') as V1Secret;
    assert.equal(unb64(superuser.data?.username), 'postgres');
    const superPassword = unb64(superuser.data?.password);
    assert.ok(superPassword.length >= 32);
    const owner = password(api, 'orders-credentials');
    assert.notEqual(owner, superPassword);

    const binding = api.get(SECRETS, 'shop', 'orders-binding') as V1Secret;
    assert.equal(unb64(binding.data?.username), 'shop');
    assert.equal(unb64(binding.data?.password), owner);
    const published = [
      ...Object.values(binding.data ?? {}).map(unb64),
      JSON.stringify(api.list(CONFIGMAPS)),
      JSON.stringify(api.get(SAMPLEDBS, 'shop', 'orders')?.status),
    ].join('\n');
    assert.ok(!published.includes(superPassword), 'the superuser password is published nowhere');
    assert.ok(!published.includes('postgres:'), 'nor the superuser name in a URI');
  });

  it('changes the role password with a Job first, then the binding; a failed Job keeps the old one', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb());
    await reconcile(api);
    const sts = api.get(STATEFULSETS, 'shop', 'orders');
    assert.ok(sts);
    api.put(STATEFULSETS, { ...sts, status: { replicas: 1, readyReplicas: 1 } });
    await reconcile(api);
    succeed(api, JOBS, 'orders-init');
    await reconcile(api);
    const first = password(api, 'orders-credentials');
    assert.equal(password(api, 'orders-binding'), first);
    assert.equal(condition(api, 'CredentialsApplied')?.status, 'True');

    const credentials = api.get(SECRETS, 'shop', 'orders-credentials') as V1Secret;
    api.put(SECRETS, {
      ...credentials,
      data: { ...credentials.data, password: b64('second-password-1234') },
    });
    await reconcile(api);
    const superPassword = password(api, 'orders-superuser');
    const jobName = ownerPasswordJobName(
      'orders',
      passwordFingerprint(superPassword, 'second-password-1234'),
    );
    const job = api.get(JOBS, 'shop', jobName) as V1Job;
    assert.ok(job, 'the password Job was created');
    assert.equal(password(api, 'orders-binding'), first, 'the binding keeps the password the role has');
    assert.equal(condition(api, 'CredentialsApplied')?.reason, 'PasswordChanging');
    // The Job's spec names no password: only Secret references and the keyed fingerprint.
    assert.ok(!JSON.stringify(job).includes('second-password-1234'));
    assert.ok(!JSON.stringify(job).includes(superPassword));

    succeed(api, JOBS, jobName);
    await reconcile(api);
    assert.equal(password(api, 'orders-binding'), 'second-password-1234');
    assert.equal(condition(api, 'CredentialsApplied')?.status, 'True');

    // A third password whose Job fails: the binding keeps the second, and the status says so.
    const again = api.get(SECRETS, 'shop', 'orders-credentials') as V1Secret;
    api.put(SECRETS, { ...again, data: { ...again.data, password: b64('third-password-1234') } });
    await reconcile(api);
    const thirdJob = ownerPasswordJobName(
      'orders',
      passwordFingerprint(superPassword, 'third-password-1234'),
    );
    const failing = api.get(JOBS, 'shop', thirdJob) as V1Job;
    api.put(JOBS, { ...failing, status: { failed: 3, conditions: [{ type: 'Failed', status: 'True' }] } });
    await reconcile(api);
    assert.equal(password(api, 'orders-binding'), 'second-password-1234');
    assert.equal(condition(api, 'CredentialsApplied')?.reason, 'PasswordChangeFailed');
    assert.ok(!JSON.stringify(api.get(SAMPLEDBS, 'shop', 'orders')?.status).includes('third-password'));
  });
});

describe('decidePublishedPassword', () => {
  const base = { current: 'new', published: 'old', initSucceeded: true, job: undefined } as const;
  it('publishes the Secret password first time, and waits for the init Job before changing it', () => {
    assert.equal(
      decidePublishedPassword({ ...base, published: undefined, initSucceeded: false }).password,
      'new',
    );
    assert.deepEqual(decidePublishedPassword({ ...base, initSucceeded: false }), {
      password: 'old',
      createJob: false,
      state: 'waiting-for-init',
    });
  });
  it('starts a Job for a changed password and publishes it only after the Job succeeded', () => {
    assert.deepEqual(decidePublishedPassword(base), { password: 'old', createJob: true, state: 'changing' });
    assert.equal(decidePublishedPassword({ ...base, job: 'running' }).password, 'old');
    assert.equal(decidePublishedPassword({ ...base, job: 'failed' }).state, 'failed');
    assert.equal(decidePublishedPassword({ ...base, job: 'failed' }).password, 'old');
    assert.equal(decidePublishedPassword({ ...base, job: 'succeeded' }).password, 'new');
  });
  it('after init, a missing binding waits for the Job rather than guess the password the role has', () => {
    assert.deepEqual(decidePublishedPassword({ ...base, published: undefined }), {
      password: undefined,
      createJob: true,
      state: 'changing',
    });
  });
});
