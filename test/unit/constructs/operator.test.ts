import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodSpec } from '@kubernetes/client-node';
import { Testing } from 'cdk8s';
import {
  CLUSTER_RULES,
  OPERATOR_NAMESPACE_RULES,
  SampleDbOperator,
  type SampleDbOperatorProps,
  ValidationError,
  WATCHED_NAMESPACE_RULES,
} from '../../../src/index.ts';
import { restrictedPodSpecViolations } from '../../support/restricted-pod-spec.ts';

type Manifest = {
  kind: string;
  apiVersion: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
};
type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };

function synth(props: Partial<SampleDbOperatorProps> = {}): Manifest[] {
  const chart = Testing.chart();
  new SampleDbOperator(chart, 'operator', { image: 'example.test/sampledb-operator@sha256:abc', ...props });
  return Testing.synth(chart) as Manifest[];
}

const byKind = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind);

/** Flattens rules to "group/resource verb" strings, so sets can be compared. */
function grants(rules: Rule[]): string[] {
  return rules
    .flatMap((r) =>
      r.apiGroups.flatMap((g) =>
        r.resources.flatMap((res) =>
          r.verbs.map(
            (v) => `${g || 'core'}/${res} ${v}${r.resourceNames ? ` [${r.resourceNames.join(',')}]` : ''}`,
          ),
        ),
      ),
    )
    .sort();
}

function deploymentOf(manifests: Manifest[]) {
  const [deployment] = byKind(manifests, 'Deployment');
  assert.ok(deployment, 'a Deployment is emitted');
  return deployment as unknown as {
    spec: {
      replicas: number;
      template: {
        spec: {
          automountServiceAccountToken?: boolean;
          serviceAccountName: string;
          containers: Array<{
            image: string;
            imagePullPolicy: string;
            env: Array<{ name: string; value?: string }>;
            livenessProbe?: { httpGet?: { path: string } };
            readinessProbe?: { httpGet?: { path: string } };
            resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
            ports: Array<{ name: string; containerPort: number }>;
            securityContext: { readOnlyRootFilesystem?: boolean };
          }>;
        };
      };
    };
  };
}

describe('SampleDbOperator RBAC', () => {
  it('grants exactly the permissions table, with no wildcard anywhere', () => {
    const manifests = synth();
    const roles = [...byKind(manifests, 'ClusterRole'), ...byKind(manifests, 'Role')];
    for (const role of roles) {
      for (const rule of role.rules as Rule[]) {
        for (const field of [rule.apiGroups, rule.resources, rule.verbs]) {
          assert.ok(
            !field.includes('*'),
            `${role.kind} ${role.metadata.name} has a wildcard: ${JSON.stringify(rule)}`,
          );
        }
      }
    }
    const [clusterRole] = byKind(manifests, 'ClusterRole');
    assert.deepEqual(
      grants(clusterRole?.rules as Rule[]),
      grants([...WATCHED_NAMESPACE_RULES, ...CLUSTER_RULES] as unknown as Rule[]),
    );
  });

  it('needs the verbs the controller uses: leases, events.k8s.io events, status, finalizers', () => {
    const all = grants(
      [...byKind(synth(), 'ClusterRole'), ...byKind(synth(), 'Role')].flatMap((r) => r.rules as Rule[]),
    );
    for (const expected of [
      'coordination.k8s.io/leases create',
      'coordination.k8s.io/leases update [sampledb-operator]',
      'events.k8s.io/events create',
      'sampledb.io/sampledbs/status patch',
      'sampledb.io/sampledbs/finalizers update',
      'apps/statefulsets patch',
      'batch/jobs create',
      'core/secrets get',
    ]) {
      assert.ok(all.includes(expected), `missing grant: ${expected}`);
    }
    // Things it must not be able to do.
    for (const forbidden of [
      'core/secrets deletecollection',
      'core/nodes get',
      'rbac.authorization.k8s.io/roles create',
    ]) {
      assert.ok(!all.includes(forbidden), `unexpected grant: ${forbidden}`);
    }
  });

  it('keeps leader election in a Role in the operator namespace, limited to its own Lease for updates', () => {
    const roles = byKind(synth({ namespace: 'ops' }), 'Role');
    const election = roles.find((r) => r.metadata.name.endsWith('leader-election'));
    assert.equal(election?.metadata.namespace, 'ops');
    assert.deepEqual(
      grants(election?.rules as Rule[]),
      grants(OPERATOR_NAMESPACE_RULES as unknown as Rule[]),
    );
  });

  it('namespace-scoped mode produces a Role per watched namespace and a ClusterRole of reads and the PV patch', () => {
    const manifests = synth({ watchNamespaces: ['team-a', 'team-b'] });
    const roles = byKind(manifests, 'Role').filter((r) => !r.metadata.name.endsWith('leader-election'));
    assert.deepEqual(roles.map((r) => r.metadata.namespace).sort(), ['team-a', 'team-b']);
    for (const role of roles) {
      assert.deepEqual(grants(role.rules as Rule[]), grants(WATCHED_NAMESPACE_RULES as unknown as Rule[]));
    }
    const clusterRoles = byKind(manifests, 'ClusterRole');
    assert.equal(clusterRoles.length, 1);
    // Reads, and one write: patching a PersistentVolume to Retain when a deletion policy cannot be satisfied.
    const clusterGrants = grants((clusterRoles[0]?.rules ?? []) as Rule[]);
    assert.deepEqual(
      clusterGrants.filter((g) => !/ (get|list|watch)$/.test(g)),
      ['core/persistentvolumes patch'],
    );
    const bindings = byKind(manifests, 'RoleBinding').map(
      (b) => `${b.metadata.namespace}/${b.metadata.name}`,
    );
    assert.ok(bindings.includes('team-a/sampledb-operator') && bindings.includes('team-b/sampledb-operator'));
  });
});

describe('SampleDbOperator Deployment', () => {
  it('passes the PostgreSQL image repository to the operator, defaulting to the official image', () => {
    const envOf = (manifests: Manifest[]) => {
      const deployment = manifests.find((m) => m.kind === 'Deployment') as unknown as {
        spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
      };
      return deployment.spec.template.spec.containers[0]?.env.find(
        (e) => e.name === 'POSTGRES_IMAGE_REPOSITORY',
      )?.value;
    };
    assert.equal(envOf(synth()), 'docker.io/library/postgres');
    assert.equal(
      envOf(synth({ postgresImageRepository: 'mirror.example.com/postgres' })),
      'mirror.example.com/postgres',
    );
    assert.throws(
      () => synth({ postgresImageRepository: 'postgres:16' }),
      (error: unknown) => error instanceof ValidationError && /postgresImageRepository/.test(error.message),
    );
  });

  it('meets PodSecurity restricted', () => {
    const pod = deploymentOf(synth()).spec.template.spec;
    assert.deepEqual(restrictedPodSpecViolations(pod as V1PodSpec), []);
    assert.equal(pod.containers[0]?.securityContext.readOnlyRootFilesystem, true);
  });

  it('avoids the cdk8s-plus defaults that break a controller', () => {
    const pod = deploymentOf(synth()).spec.template.spec;
    assert.equal(pod.automountServiceAccountToken, true, 'the controller needs its ServiceAccount token');
    assert.equal(pod.containers[0]?.imagePullPolicy, 'IfNotPresent');
    assert.equal(pod.serviceAccountName, 'sampledb-operator');
  });

  it('runs two replicas with leader election, probes, metrics port and resources by default', () => {
    const deployment = deploymentOf(synth());
    assert.equal(deployment.spec.replicas, 2);
    const container = deployment.spec.template.spec.containers[0];
    const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(env.LEADER_ELECTION, 'true');
    assert.equal(container?.livenessProbe?.httpGet?.path, '/healthz');
    assert.equal(container?.readinessProbe?.httpGet?.path, '/readyz');
    assert.deepEqual(
      container?.ports.map((p) => [p.name, p.containerPort]),
      [
        ['metrics', 8080],
        ['health', 8081],
      ],
    );
    assert.equal(container?.resources?.limits?.memory, '512Mi');
    assert.equal(env.NODE_OPTIONS, '--max-old-space-size=384', 'V8 heap sized from the memory limit');
  });

  it('passes watch namespaces and log level to the controller', () => {
    const container = deploymentOf(synth({ watchNamespaces: ['a', 'b'], logLevel: 'debug' })).spec.template
      .spec.containers[0];
    const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(env.WATCH_NAMESPACES, 'a,b');
    assert.equal(env.LOG_LEVEL, 'debug');
  });

  it('emits a PodDisruptionBudget, a metrics Service and a restricted namespace', () => {
    const manifests = synth();
    assert.equal(byKind(manifests, 'PodDisruptionBudget').length, 1);
    const [service] = byKind(manifests, 'Service');
    assert.equal(service?.metadata.name, 'sampledb-operator-metrics');
    const [namespace] = byKind(manifests, 'Namespace');
    assert.equal(namespace?.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
    assert.equal(byKind(synth({ createNamespace: false }), 'Namespace').length, 0);
  });

  it('emits the deletion-protection admission policy and its binding', () => {
    const manifests = synth();
    const [policy] = byKind(manifests, 'ValidatingAdmissionPolicy') as Array<
      Manifest & { spec: { validations: Array<{ expression: string }> } }
    >;
    assert.match(policy?.spec.validations[0]?.expression ?? '', /oldObject\.spec\.deletion\.protection/);
    assert.equal(byKind(manifests, 'ValidatingAdmissionPolicyBinding').length, 1);
    assert.equal(byKind(synth({ deletionProtection: false }), 'ValidatingAdmissionPolicy').length, 0);
  });
});

describe('SampleDbOperator props validation', () => {
  const cases: Array<[Partial<SampleDbOperatorProps>, string]> = [
    [{ image: '' }, 'image'],
    [{ replicas: 0 }, 'replicas'],
    [{ replicas: 1.5 }, 'replicas'],
    [{ replicas: 3, leaderElection: false }, 'leaderElection'],
    [{ namespace: 'Not_A_Namespace' }, 'namespace'],
    [{ watchNamespaces: ['ok', 'NOT OK'] }, 'watchNamespaces[1]'],
    [{ metricsPort: 80 }, 'metricsPort'],
    [{ healthPort: 8080 }, 'healthPort'],
    [{ resources: { limits: { memory: 'lots' } } }, 'resources.limits.memory'],
  ];
  for (const [props, field] of cases) {
    it(`names the field: ${field}`, () => {
      assert.throws(
        () => synth(props),
        (error: unknown) => error instanceof ValidationError && error.errors.some((e) => e.field === field),
      );
    });
  }

  it('allows a single replica without leader election', () => {
    const env = deploymentOf(synth({ replicas: 1, leaderElection: false })).spec.template.spec.containers[0]
      ?.env;
    assert.equal(env?.find((e) => e.name === 'LEADER_ELECTION')?.value, 'false');
  });
});
