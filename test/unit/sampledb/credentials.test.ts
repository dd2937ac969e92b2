import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  credentialsSecret,
  generatePassword,
  PASSWORD_LENGTH,
  readCredentials,
} from '../../../src/sampledb/credentials.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { sampleDb } from '../../support/sampledb.ts';

const decode = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString('utf8');

describe('credentialsSecret', () => {
  it('generates <name>-credentials with the owner as username and a long random password', () => {
    const secret = credentialsSecret(resolveInstance(sampleDb({ bootstrap: { owner: 'shop' } })), undefined);
    assert.ok(secret);
    assert.equal(secret.metadata?.name, 'orders-credentials');
    assert.equal(decode(secret.data?.username), 'shop');
    const password = decode(secret.data?.password);
    assert.ok(password.length >= 32, `password has ${password.length} characters`);
    assert.match(password, /^[A-Za-z0-9]+$/);
  });

  it('draws every password character from the given CSPRNG source', () => {
    const calls: number[] = [];
    const password = generatePassword(PASSWORD_LENGTH, (max) => {
      calls.push(max);
      return 0;
    });
    assert.equal(calls.length, PASSWORD_LENGTH);
    assert.equal(password, 'A'.repeat(PASSWORD_LENGTH));
  });

  it('uses crypto.randomInt by default: two Secrets never share a password', () => {
    const passwords = new Set(
      Array.from({ length: 50 }, () =>
        decode(credentialsSecret(resolveInstance(sampleDb()), undefined)?.data?.password),
      ),
    );
    assert.equal(passwords.size, 50);
  });

  it('never changes the password of an existing Secret', () => {
    const existing = credentialsSecret(resolveInstance(sampleDb()), undefined);
    assert.ok(existing);
    const again = credentialsSecret(resolveInstance(sampleDb()), existing, () => {
      throw new Error('must not generate a password for an existing Secret');
    });
    assert.equal(again?.data?.password, existing.data?.password);
  });

  it('fills in a password only when the existing Secret has none', () => {
    const again = credentialsSecret(resolveInstance(sampleDb()), {
      data: { username: Buffer.from('app').toString('base64') },
    });
    assert.ok(decode(again?.data?.password).length >= 32);
  });

  it('creates nothing when the user supplies the Secret, and points everything at that Secret', () => {
    const db = sampleDb({ bootstrap: { credentialsSecret: { name: 'my-creds' } } });
    assert.equal(credentialsSecret(resolveInstance(db), undefined), undefined);
    assert.equal(resolveInstance(db).credentials.secretName, 'my-creds');
  });
});

describe('readCredentials', () => {
  it('reads username and password, and reports an incomplete Secret as undefined', () => {
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    assert.deepEqual(readCredentials({ data: { username: b64('app'), password: b64('s3cret') } }), {
      username: 'app',
      password: 's3cret',
    });
    assert.equal(readCredentials({ data: { username: b64('app') } }), undefined);
    assert.equal(readCredentials(undefined), undefined);
  });
});
