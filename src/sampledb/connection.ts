// How applications find the database: a ConfigMap without secrets and a servicebinding.io Secret with them.
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { OPERATOR_NAME } from '../api/index.ts';
import type { Endpoint, SampleDbInstance } from './instance.ts';
import { childMeta } from './meta.ts';

/**
 * The connection ConfigMap. Never holds the password. The PG* keys let a pod take it with `envFrom` and libpq
 * picks them up; the password comes from the credentials or binding Secret.
 */
export function connectionConfigMap(instance: SampleDbInstance): V1ConfigMap {
  const { host, port, database, username } = instance.endpoint;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: childMeta(instance, instance.names.connectionConfigMap, 'connection'),
    data: {
      host,
      port: String(port),
      database,
      username,
      PGHOST: host,
      PGPORT: String(port),
      PGDATABASE: database,
      PGUSER: username,
    },
  };
}

/** `postgresql://user:password@host:port/database` with every part percent-encoded. */
export function connectionUri(endpoint: Endpoint, password: string): string {
  const user = encodeURIComponent(endpoint.username);
  return `postgresql://${user}:${encodeURIComponent(password)}@${endpoint.host}:${endpoint.port}/${encodeURIComponent(endpoint.database)}`;
}

const encode = (value: string) => Buffer.from(value, 'utf8').toString('base64');

/**
 * The Service Binding (servicebinding.io) provisioned-service Secret. `password` is read from the credentials
 * Secret by the caller; the username is the database owner applications log in as.
 */
export function bindingSecret(instance: SampleDbInstance, password: string): V1Secret {
  const { endpoint } = instance;
  const entries = {
    type: 'postgresql',
    provider: OPERATOR_NAME,
    host: endpoint.host,
    port: String(endpoint.port),
    database: endpoint.database,
    username: endpoint.username,
    password,
    uri: connectionUri(endpoint, password),
  };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: childMeta(instance, instance.names.bindingSecret, 'binding'),
    type: 'servicebinding.io/postgresql',
    data: Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, encode(v)])),
  };
}
