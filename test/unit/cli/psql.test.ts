import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbObject } from '../../../src/api/sampledb.ts';
import { psqlEnv, psqlPlan } from '../../../src/cli/psql.ts';

const db = (status: Record<string, unknown> | undefined) =>
  ({ metadata: { name: 'orders' }, spec: {}, status }) as unknown as SampleDbObject;
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('kubectl sampledb psql plan', () => {
  it('forwards to the elected primary, else pod 0, with the binding Secret', () => {
    assert.deepEqual(
      psqlPlan(db({ binding: { name: 'orders-binding' }, replication: { primary: 'orders-2' } })),
      {
        secret: 'orders-binding',
        pod: 'orders-2',
      },
    );
    assert.deepEqual(psqlPlan(db({ binding: { name: 'orders-binding' } })), {
      secret: 'orders-binding',
      pod: 'orders-0',
    });
  });

  it('refuses a SampleDB without a binding Secret, saying what to wait for', () => {
    assert.throws(
      () => psqlPlan(db(undefined)),
      /SampleDB "orders" reports no binding Secret yet \(status\.binding\)/,
    );
  });

  it('gives psql the credentials in its environment, and names a missing key without its value', () => {
    assert.deepEqual(
      psqlEnv(
        { username: b64('app'), password: b64('s3cr3t'), database: b64('app'), uri: b64('x') },
        'orders-binding',
        40000,
      ),
      { PGHOST: '127.0.0.1', PGPORT: '40000', PGUSER: 'app', PGPASSWORD: 's3cr3t', PGDATABASE: 'app' },
    );
    assert.throws(
      () => psqlEnv({ username: b64('app'), password: b64('s3cr3t') }, 'orders-binding', 1),
      (error: Error) => {
        assert.match(error.message, /Secret "orders-binding" has no "database"/);
        assert.doesNotMatch(error.message, /s3cr3t/);
        return true;
      },
    );
  });
});
