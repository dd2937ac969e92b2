// Example SampleDBs synthesized into dist/: a minimal one and one that sets every field.
import { Chart, type ChartProps } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { SampleDb } from '../constructs/index.ts';

export const EXAMPLES_NAMESPACE = 'sampledb-examples';

export class ExamplesChart extends Chart {
  constructor(scope: Construct, id: string, props: ChartProps = {}) {
    super(scope, id, props);
    const namespace = EXAMPLES_NAMESPACE;

    new k8s.KubeNamespace(this, 'namespace', {
      metadata: {
        name: EXAMPLES_NAMESPACE,
        labels: { 'pod-security.kubernetes.io/enforce': 'restricted' },
      },
    });

    // The smallest useful SampleDB: everything else takes its default. The versions are ones Debian ships (15 in
    // bookworm, 17 in trixie), so `npm run dev -- --node real` runs both on the images built on the machine.
    new SampleDb(this, 'minimal', {
      name: 'minimal',
      namespace,
      spec: { version: '17', storage: { size: '1Gi' } },
    });

    new k8s.KubeConfigMap(this, 'orders-init-sql', {
      metadata: { name: 'orders-init-sql', namespace },
      data: {
        'init.sql': [
          'CREATE TABLE IF NOT EXISTS orders (',
          '  id bigserial PRIMARY KEY,',
          '  customer text NOT NULL,',
          '  total_cents bigint NOT NULL CHECK (total_cents >= 0),',
          '  created_at timestamptz NOT NULL DEFAULT now()',
          ');',
          'CREATE INDEX IF NOT EXISTS orders_customer_idx ON orders (customer);',
          '',
        ].join('\n'),
      },
    });

    // Every field set, with the values a production database might use.
    new SampleDb(this, 'orders', {
      name: 'orders',
      namespace,
      labels: { team: 'checkout' },
      spec: {
        version: '15',
        storage: { size: '20Gi', storageClassName: 'standard' },
        resources: { requests: { cpu: '500m', memory: '2Gi' }, limits: { cpu: '2', memory: '2Gi' } },
        postgresql: { parameters: { max_connections: '200', log_min_duration_statement: '500ms' } },
        service: { type: 'ClusterIP', port: 5432, annotations: { 'example.com/team': 'checkout' } },
        bootstrap: {
          database: 'orders',
          owner: 'orders',
          initSQL: { name: 'orders-init-sql', key: 'init.sql' },
        },
        backup: {
          schedule: '0 3 * * *',
          timezone: 'Asia/Seoul',
          suspend: false,
          retention: { count: 7, maxAge: '30d' },
          volume: { size: '40Gi', storageClassName: 'standard' },
        },
        deletion: { policy: 'Snapshot', protection: true },
      },
    });
  }
}
