import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bindingSecret, connectionConfigMap, connectionUri } from '../../../src/sampledb/connection.ts';
import { endpointString, resolveInstance } from '../../../src/sampledb/instance.ts';
import { sampleDb } from '../../support/sampledb.ts';

const decodeAll = (data: Record<string, string> | undefined) =>
  Object.fromEntries(
    Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );

describe('connectionConfigMap', () => {
  const db = sampleDb({ bootstrap: { database: 'orders', owner: 'shop' }, service: { port: 6432 } });

  it('holds host (the client Service FQDN), port, database and user', () => {
    const data = connectionConfigMap(resolveInstance(db)).data ?? {};
    assert.equal(data.host, 'orders.shop.svc');
    assert.equal(data.port, '6432');
    assert.equal(data.database, 'orders');
    assert.equal(data.username, 'shop');
    assert.equal(data.PGHOST, 'orders.shop.svc');
    assert.equal(data.PGUSER, 'shop');
  });

  it('never holds the password', () => {
    const configMap = connectionConfigMap(resolveInstance(db));
    const text = JSON.stringify(configMap).toLowerCase();
    assert.equal(text.includes('password'), false);
    assert.equal(text.includes('pgpassword'), false);
  });

  it('gives status.endpoint as host:port', () => {
    assert.equal(endpointString(resolveInstance(db)), 'orders.shop.svc:6432');
  });
});

describe('bindingSecret', () => {
  const db = sampleDb({ bootstrap: { database: 'orders', owner: 'shop' } });

  it('has the servicebinding.io provisioned-service keys', () => {
    const secret = bindingSecret(resolveInstance(db), 'pw');
    assert.equal(secret.metadata?.name, 'orders-binding');
    assert.equal(secret.type, 'servicebinding.io/postgresql');
    assert.deepEqual(decodeAll(secret.data), {
      type: 'postgresql',
      provider: 'sampledb-operator',
      host: 'orders.shop.svc',
      port: '5432',
      database: 'orders',
      username: 'shop',
      password: 'pw',
      uri: 'postgresql://shop:pw@orders.shop.svc:5432/orders',
    });
  });

  it('percent-encodes the password in the uri so it parses back to the same credentials', () => {
    const password = 'p@ss:w/rd?#%';
    const uri = decodeAll(bindingSecret(resolveInstance(db), password).data).uri ?? '';
    const parsed = new URL(uri);
    assert.equal(decodeURIComponent(parsed.password), password);
    assert.equal(parsed.username, 'shop');
    assert.equal(parsed.hostname, 'orders.shop.svc');
    assert.equal(parsed.pathname, '/orders');
  });

  it('builds uris as postgresql://user:pass@host:port/db', () => {
    assert.equal(
      connectionUri({ host: 'h', port: 1, database: 'd', username: 'u' }, 'a b'),
      'postgresql://u:a%20b@h:1/d',
    );
  });
});
