// The headless Service that gives the StatefulSet pod its stable DNS name, and the client Service that publishes
// the database.
import type { V1Service } from '@kubernetes/client-node';
import { POSTGRES_PORT, POSTGRES_PORT_NAME, resolveSampleDbSpec, type SampleDbObject } from '../api/index.ts';
import { childMeta, labelsFor, nameOf } from './meta.ts';
import { namesFor } from './names.ts';

export function databaseSelector(db: SampleDbObject): Record<string, string> {
  return labelsFor(db, 'database');
}

export function headlessService(db: SampleDbObject): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(db, namesFor(nameOf(db)).headlessService, 'database'),
    spec: {
      clusterIP: 'None',
      // The pod must be resolvable before it is ready: the init Job and peers reach it while it starts.
      publishNotReadyAddresses: true,
      selector: databaseSelector(db),
      ports: [{ name: POSTGRES_PORT_NAME, port: POSTGRES_PORT, targetPort: POSTGRES_PORT, protocol: 'TCP' }],
    },
  };
}

export function clientService(db: SampleDbObject): V1Service {
  const { service } = resolveSampleDbSpec(db.spec);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(db, namesFor(nameOf(db)).clientService, 'database', {
      annotations: service.annotations,
    }),
    spec: {
      type: service.type,
      selector: databaseSelector(db),
      ports: [{ name: POSTGRES_PORT_NAME, port: service.port, targetPort: POSTGRES_PORT, protocol: 'TCP' }],
    },
  };
}
