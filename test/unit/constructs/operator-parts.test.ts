// The SampleDbOperator's sub-constructs on their own, and the construct paths the Helm chart's templates are named by.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiObject, Testing } from 'cdk8s';
import {
  OPERATOR_SETTINGS,
  OperatorDeployment,
  OperatorMetrics,
  type RenderedOperatorSettings,
  SampleDbOperator,
} from '../../../src/index.ts';

const settings: RenderedOperatorSettings = {
  watchNamespaces: ['apps'],
  leaderElection: true,
  logLevel: 'info',
  metricsPort: 9000,
  healthPort: 9001,
  postgresImageRepository: 'registry.example.com/postgres',
};

type Container = {
  env: { name: string; value?: string }[];
  ports: { name: string; containerPort: number }[];
  resources: { requests: Record<string, string>; limits: Record<string, string> };
};

describe('OperatorDeployment', () => {
  it('renders the settings into the environment and the ports, and merges resources over the defaults', () => {
    const chart = Testing.chart();
    new OperatorDeployment(chart, 'deployment', {
      name: 'op',
      namespace: 'ops',
      image: 'example.test/op@sha256:abc',
      serviceAccountName: 'op-sa',
      settings,
      resources: { limits: { cpu: '1', memory: '1Gi' } },
    });
    const [deployment] = Testing.synth(chart) as {
      spec: { replicas: number; template: { spec: { serviceAccountName: string; containers: Container[] } } };
    }[];
    const pod = deployment?.spec.template.spec;
    const container = pod?.containers[0];
    assert.equal(deployment?.spec.replicas, 2);
    assert.equal(pod?.serviceAccountName, 'op-sa');
    assert.deepEqual(
      container?.env.map((e) => e.name),
      ['POD_NAME', 'POD_NAMESPACE', ...Object.values(OPERATOR_SETTINGS).map((s) => s.env), 'NODE_OPTIONS'],
    );
    assert.equal(container?.env.find((e) => e.name === 'WATCH_NAMESPACES')?.value, 'apps');
    assert.equal(container?.env.find((e) => e.name === 'NODE_OPTIONS')?.value, '--max-old-space-size=768');
    assert.deepEqual(
      container?.ports.map((p) => [p.name, p.containerPort]),
      [
        ['metrics', 9000],
        ['health', 9001],
      ],
    );
    assert.deepEqual(container?.resources, {
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '1', memory: '1Gi' },
    });
  });
});

describe('OperatorMetrics', () => {
  it('serves the given port from the containers port named metrics', () => {
    const chart = Testing.chart();
    new OperatorMetrics(chart, 'metrics', { name: 'op-metrics', namespace: 'ops', port: 9000 });
    const [service] = Testing.synth(chart) as { spec: { ports: unknown[] } }[];
    assert.deepEqual(service?.spec.ports, [{ name: 'metrics', port: 9000, targetPort: 'metrics' }]);
  });
});

describe('SampleDbOperator construct paths', () => {
  it('stay as the Helm chart names its templates after them', () => {
    const chart = Testing.chart();
    new SampleDbOperator(chart, 'operator', { image: 'example.test/op@sha256:abc', watchNamespaces: ['a'] });
    const paths = chart.node
      .findAll()
      .filter((c) => c instanceof ApiObject)
      .map((c) => c.node.path.split('/').slice(1).join('/'));
    assert.deepEqual(paths, [
      'operator/namespace',
      'operator/service-account',
      'operator/rbac/cluster-role',
      'operator/rbac/cluster-role-binding',
      'operator/rbac/role-a',
      'operator/rbac/role-binding-a',
      'operator/rbac/leader-election-role',
      'operator/rbac/leader-election-binding',
      'operator/deployment',
      'operator/pdb',
      'operator/metrics-service',
      'operator/deletion-protection/policy',
      'operator/deletion-protection/binding',
    ]);
  });
});
