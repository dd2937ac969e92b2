// How applications find the database: a ConfigMap without secrets and a servicebinding.io Secret with them.
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { OPERATOR_NAME, resolveSampleDbSpec, type SampleDbObject } from '../api/index.ts';
import { childMeta, nameOf, namespaceOf } from './meta.ts';
import { namesFor } from './names.ts';

export interface Endpoint {
  host: string;
  port: number;
  database: string;
  username: string;
}

/** Where clients connect: the client Service's cluster DNS name (without the cluster domain, which varies). */
export function endpointOf(db: SampleDbObject): Endpoint {
  const spec = resolveSampleDbSpec(db.spec);
  return {
    host: `${namesFor(nameOf(db)).clientService}.${namespaceOf(db)}.svc`,
    port: spec.service.port,
    database: spec.bootstrap.database,
    username: spec.bootstrap.owner,
  };
}

/** `host:port` for `status.endpoint`. */
export function endpointString(db: SampleDbObject): string {
  const { host, port } = endpointOf(db);
  return `${host}:${port}`;
}

/**
 * The connection ConfigMap. Never holds the password. The PG* keys let a pod take it with `envFrom` and libpq
 * picks them up; the password comes from the credentials or binding Secret.
 */
export function connectionConfigMap(db: SampleDbObject): V1ConfigMap {
  const { host, port, database, username } = endpointOf(db);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: childMeta(db, namesFor(nameOf(db)).connectionConfigMap, 'connection'),
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
export function bindingSecret(db: SampleDbObject, password: string): V1Secret {
  const endpoint = endpointOf(db);
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
    metadata: childMeta(db, namesFor(nameOf(db)).bindingSecret, 'binding'),
    type: 'servicebinding.io/postgresql',
    data: Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, encode(v)])),
  };
}
