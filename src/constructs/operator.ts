import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import {
  type FieldError,
  imageRepositoryProblem,
  type LogLevel,
  parseQuantity,
  type RenderedOperatorSettings,
  ValidationError,
} from '../api/index.ts';
import { SampleDbDeletionProtection } from './deletion-protection.ts';
import { operatorLabels } from './labels.ts';
import { SampleDbMonitoring } from './monitoring.ts';
import { OPERATOR_DEFAULTS, type OperatorResources } from './operator-defaults.ts';
import { OperatorDeployment, OperatorDisruptionBudget } from './operator-deployment.ts';
import { OperatorMetrics } from './operator-metrics.ts';
import { OperatorRbac } from './rbac.ts';

export interface SampleDbOperatorProps {
  /** Controller image, ideally pinned by digest (`repo@sha256:...`). Required. */
  readonly image: string;
  /** Namespace the controller runs in. Default: `sampledb-system`. */
  readonly namespace?: string;
  /** Emit the Namespace object, labelled for PodSecurity `restricted`. Default: `true`. */
  readonly createNamespace?: boolean;
  /** Base name of the Deployment, ServiceAccount, roles and Services. Default: `sampledb-operator`. */
  readonly name?: string;
  /** Controller replicas. Default: `2` (one leader, one warm standby). */
  readonly replicas?: number;
  /** Elect a leader through a Lease so only one replica reconciles. Default: `true`; required when replicas > 1. */
  readonly leaderElection?: boolean;
  /**
   * Namespaces whose SampleDBs the operator manages. Default: `[]`, meaning all namespaces (a ClusterRole).
   * A list gives namespace-scoped Roles instead.
   */
  readonly watchNamespaces?: readonly string[];
  /** Log level. Default: `info`. */
  readonly logLevel?: LogLevel;
  /**
   * Image pull policy. Default: `IfNotPresent` (cdk8s-plus defaults to `Always`, which makes every restart depend
   * on the registry; pin the image by digest instead).
   */
  readonly imagePullPolicy?: 'IfNotPresent' | 'Always' | 'Never';
  /** Names of Secrets for pulling the image. Default: none. */
  readonly imagePullSecrets?: readonly string[];
  /** Container resources. Default: requests 100m CPU / 128Mi, limit 512Mi memory. */
  readonly resources?: OperatorResources;
  /** Port of the Prometheus `/metrics` endpoint. Default: `8080`. */
  readonly metricsPort?: number;
  /** Port of `/healthz` and `/readyz`. Default: `8081`. */
  readonly healthPort?: number;
  /**
   * Emit the ValidatingAdmissionPolicy that refuses to delete a SampleDB with `spec.deletion.protection: true`.
   * Default: `true`.
   */
  readonly deletionProtection?: boolean;
  /**
   * Repository of the PostgreSQL images, tagged by version (`<repository>:<spec.version>`), for SampleDBs without
   * `spec.image`: a mirror or an air-gapped registry. Default: `docker.io/library/postgres`.
   */
  readonly postgresImageRepository?: string;
  /**
   * Also emit the Prometheus operator objects (SampleDbMonitoring: ServiceMonitor, PodMonitor, PrometheusRule) in
   * the operator's namespace. Needs the monitoring.coreos.com/v1 CRDs. Default: `false`.
   */
  readonly monitoring?: boolean;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function validateProps(props: SampleDbOperatorProps): void {
  const errors: FieldError[] = [];
  const replicas = props.replicas ?? OPERATOR_DEFAULTS.replicas;
  if (!props.image || /\s/.test(props.image))
    errors.push({ field: 'image', message: 'an image reference is required' });
  if (!Number.isInteger(replicas) || replicas < 1) {
    errors.push({ field: 'replicas', message: `must be a whole number >= 1, got ${replicas}` });
  }
  const repositoryProblem =
    props.postgresImageRepository === undefined
      ? undefined
      : imageRepositoryProblem(props.postgresImageRepository);
  if (repositoryProblem) errors.push({ field: 'postgresImageRepository', message: repositoryProblem });
  if (replicas > 1 && props.leaderElection === false) {
    errors.push({ field: 'leaderElection', message: 'more than one replica needs leader election' });
  }
  for (const [field, value] of [
    ['namespace', props.namespace],
    ['name', props.name],
  ] as const) {
    if (value !== undefined && (!DNS_LABEL.test(value) || value.length > 63)) {
      errors.push({ field, message: `"${value}" is not a DNS-1123 label` });
    }
  }
  (props.watchNamespaces ?? []).forEach((ns, i) => {
    if (!DNS_LABEL.test(ns))
      errors.push({ field: `watchNamespaces[${i}]`, message: `"${ns}" is not a namespace name` });
  });
  for (const field of ['metricsPort', 'healthPort'] as const) {
    const port = props[field];
    if (port !== undefined && (!Number.isInteger(port) || port < 1024 || port > 65535)) {
      errors.push({
        field,
        message: `must be a port in 1024-65535 (the controller runs as non-root), got ${port}`,
      });
    }
  }
  if (
    (props.metricsPort ?? OPERATOR_DEFAULTS.metricsPort) ===
    (props.healthPort ?? OPERATOR_DEFAULTS.healthPort)
  ) {
    errors.push({ field: 'healthPort', message: 'must differ from metricsPort' });
  }
  for (const kind of ['requests', 'limits'] as const) {
    for (const resource of ['cpu', 'memory'] as const) {
      const value = props.resources?.[kind]?.[resource];
      if (value !== undefined && parseQuantity(value) === undefined) {
        errors.push({ field: `resources.${kind}.${resource}`, message: `"${value}" is not a quantity` });
      }
    }
  }
  if (errors.length > 0) throw new ValidationError('SampleDbOperator props', errors);
}

/**
 * Everything that runs the SampleDB controller: namespace, ServiceAccount, least-privilege RBAC, the Deployment
 * (PodSecurity `restricted`, probes, leader election), a PodDisruptionBudget, the metrics Service and the
 * deletion-protection admission policy. The CRDs are separate ({@link SampleDbCrds}) so they can be applied first.
 */
export class SampleDbOperator extends Construct {
  readonly namespace: string;
  readonly name: string;
  readonly deployment: OperatorDeployment;

  constructor(scope: Construct, id: string, props: SampleDbOperatorProps) {
    super(scope, id);
    validateProps(props);
    const d = OPERATOR_DEFAULTS;
    this.namespace = props.namespace ?? d.namespace;
    this.name = props.name ?? d.name;
    const { namespace, name } = this;
    const watchNamespaces = props.watchNamespaces ?? d.watchNamespaces;
    const settings: RenderedOperatorSettings = {
      watchNamespaces,
      leaderElection: props.leaderElection ?? d.leaderElection,
      logLevel: props.logLevel ?? d.logLevel,
      metricsPort: props.metricsPort ?? d.metricsPort,
      healthPort: props.healthPort ?? d.healthPort,
      postgresImageRepository: props.postgresImageRepository ?? d.postgresImageRepository,
    };

    if (props.createNamespace ?? d.createNamespace) {
      new k8s.KubeNamespace(this, 'namespace', {
        metadata: {
          name: namespace,
          labels: {
            ...operatorLabels('namespace'),
            'pod-security.kubernetes.io/enforce': 'restricted',
            'pod-security.kubernetes.io/enforce-version': 'latest',
          },
        },
      });
    }
    new k8s.KubeServiceAccount(this, 'service-account', {
      metadata: { name, namespace, labels: operatorLabels('controller') },
      // The controller talks to the apiserver with this token (cdk8s-plus would set this to false).
      automountServiceAccountToken: true,
    });
    new OperatorRbac(this, 'rbac', { name, namespace, serviceAccountName: name, watchNamespaces });
    this.deployment = new OperatorDeployment(this, 'deployment', {
      name,
      namespace,
      image: props.image,
      serviceAccountName: name,
      settings,
      replicas: props.replicas ?? d.replicas,
      imagePullPolicy: props.imagePullPolicy ?? d.imagePullPolicy,
      ...(props.imagePullSecrets ? { imagePullSecrets: props.imagePullSecrets } : {}),
      ...(props.resources ? { resources: props.resources } : {}),
    });
    new OperatorDisruptionBudget(this, 'pdb', { name, namespace });
    new OperatorMetrics(this, 'metrics-service', {
      name: `${name}-metrics`,
      namespace,
      port: settings.metricsPort,
    });
    if (props.monitoring ?? d.monitoring) {
      new SampleDbMonitoring(this, 'monitoring', { namespace, serviceMonitor: { operatorName: name } });
    }
    if (props.deletionProtection ?? d.deletionProtection) {
      new SampleDbDeletionProtection(this, 'deletion-protection', { name: `${name}-deletion-protection` });
    }
  }
}
