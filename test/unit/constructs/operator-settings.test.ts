// The environment contract end to end: what the SampleDbOperator construct writes into its Deployment is what
// src/main.ts reads back, for the defaults and for every prop that becomes a setting.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Testing } from 'cdk8s';
import {
  OPERATOR_DEFAULTS,
  OPERATOR_SETTINGS,
  type OperatorSetting,
  type OperatorSettings,
  parseOperatorSettings,
  SampleDbOperator,
  type SampleDbOperatorProps,
} from '../../../src/index.ts';
import { settingsFrom } from '../../../src/main.ts';

type EnvVar = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };

/** The Deployment's environment as the kubelet would give it to a pod named `pod` in the Deployment's namespace. */
function podEnvironment(props: Partial<SampleDbOperatorProps> = {}): Record<string, string> {
  const chart = Testing.chart();
  new SampleDbOperator(chart, 'operator', { image: 'example.test/op@sha256:abc', ...props });
  const deployment = Testing.synth(chart).find((m) => m.kind === 'Deployment') as {
    metadata: { namespace: string };
    spec: { template: { spec: { containers: { env: EnvVar[] }[] } } };
  };
  const downward: Record<string, string> = {
    'metadata.name': 'operator-pod-1',
    'metadata.namespace': deployment.metadata.namespace,
  };
  const env: Record<string, string> = {};
  for (const v of deployment.spec.template.spec.containers[0]?.env ?? []) {
    const fieldPath = v.valueFrom?.fieldRef?.fieldPath;
    const value = fieldPath ? downward[fieldPath] : v.value;
    assert.ok(value !== undefined, `${v.name} has a value or a known downward-API field`);
    env[v.name] = value;
  }
  return env;
}

describe('operator settings: construct → environment → main.ts', () => {
  it('reads back the construct defaults', () => {
    const settings: OperatorSettings = settingsFrom(podEnvironment());
    assert.deepEqual(settings, {
      kubeconfigPath: undefined,
      namespaces: [],
      leaderElection: { namespace: OPERATOR_DEFAULTS.namespace, identity: 'operator-pod-1' },
      logLevel: OPERATOR_DEFAULTS.logLevel,
      healthPort: OPERATOR_DEFAULTS.healthPort,
      metricsPort: OPERATOR_DEFAULTS.metricsPort,
      postgresImageRepository: OPERATOR_DEFAULTS.postgresImageRepository,
    });
  });

  it('reads back every prop that is a setting', () => {
    const settings = settingsFrom(
      podEnvironment({
        namespace: 'ops',
        replicas: 1,
        leaderElection: false,
        watchNamespaces: ['team-a', 'team-b'],
        logLevel: 'debug',
        metricsPort: 9090,
        healthPort: 9091,
        postgresImageRepository: 'registry.example.com:5000/mirror/postgres',
      }),
    );
    assert.deepEqual(settings, {
      kubeconfigPath: undefined,
      namespaces: ['team-a', 'team-b'],
      leaderElection: undefined,
      logLevel: 'debug',
      healthPort: 9091,
      metricsPort: 9090,
      postgresImageRepository: 'registry.example.com:5000/mirror/postgres',
    });
  });

  it('gives the leader election the pod name and namespace from the downward API', () => {
    assert.deepEqual(settingsFrom(podEnvironment({ namespace: 'ops' })).leaderElection, {
      namespace: 'ops',
      identity: 'operator-pod-1',
    });
  });

  it('parses each default as rendered, and an unset or empty variable as the default', () => {
    for (const [key, s] of Object.entries(OPERATOR_SETTINGS) as [string, OperatorSetting<unknown>][]) {
      assert.deepEqual(s.parse(s.render(s.default)), s.default, `${key} round-trips its default`);
    }
    const unset = parseOperatorSettings({});
    const empty = parseOperatorSettings(
      Object.fromEntries(Object.values(OPERATOR_SETTINGS).map((s) => [s.env, ''])),
    );
    assert.deepEqual(empty, unset);
    assert.equal(unset.logLevel, OPERATOR_SETTINGS.logLevel.default);
    assert.equal(unset.healthPort, OPERATOR_SETTINGS.healthPort.default);
    assert.equal(unset.leaderElection, undefined);
  });

  it('names the variable that is wrong', () => {
    assert.throws(
      () => parseOperatorSettings({ LOG_LEVEL: 'loud' }),
      /^Error: LOG_LEVEL: "loud" is not one of/,
    );
    assert.throws(() => parseOperatorSettings({ METRICS_PORT: '70000' }), /^Error: METRICS_PORT: "70000"/);
  });
});
