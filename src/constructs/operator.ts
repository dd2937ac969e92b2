import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import {
  DEFAULT_IMAGE_REPOSITORY,
  type FieldError,
  imageRepositoryProblem,
  parseQuantity,
  ValidationError,
} from '../api/index.ts';
import { SampleDbDeletionProtection } from './deletion-protection.ts';
import { OPERATOR_NAME, operatorLabels, operatorSelector } from './labels.ts';
import { SampleDbMonitoring } from './monitoring.ts';
import { OperatorRbac } from './rbac.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface OperatorResources {
  readonly requests?: { readonly cpu?: string; readonly memory?: string };
  readonly limits?: { readonly cpu?: string; readonly memory?: string };
}

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

export const OPERATOR_DEFAULTS = {
  namespace: 'sampledb-system',
  createNamespace: true,
  name: OPERATOR_NAME,
  replicas: 2,
  leaderElection: true,
  logLevel: 'info',
  imagePullPolicy: 'IfNotPresent',
  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
  metricsPort: 8080,
  healthPort: 8081,
  deletionProtection: true,
  postgresImageRepository: DEFAULT_IMAGE_REPOSITORY,
  monitoring: false,
} as const;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const NON_ROOT_UID = 65532;

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

/** V8's heap limit from the container memory limit, leaving room for buffers and native memory. */
function maxOldSpaceMiB(memoryLimit: string | undefined): number | undefined {
  const bytes = memoryLimit ? parseQuantity(memoryLimit) : undefined;
  return bytes ? Math.max(64, Math.floor((bytes / 2 ** 20) * 0.75)) : undefined;
}

/**
 * Everything that runs the SampleDB controller: namespace, ServiceAccount, least-privilege RBAC, the Deployment
 * (PodSecurity `restricted`, probes, leader election), a PodDisruptionBudget, the metrics Service and the
 * deletion-protection admission policy. The CRDs are separate ({@link SampleDbCrds}) so they can be applied first.
 */
export class SampleDbOperator extends Construct {
  readonly namespace: string;
  readonly name: string;
  readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: SampleDbOperatorProps) {
    super(scope, id);
    validateProps(props);
    const d = OPERATOR_DEFAULTS;
    this.namespace = props.namespace ?? d.namespace;
    this.name = props.name ?? d.name;
    const replicas = props.replicas ?? d.replicas;
    const metricsPort = props.metricsPort ?? d.metricsPort;
    const healthPort = props.healthPort ?? d.healthPort;
    const resources = {
      requests: { ...d.resources.requests, ...props.resources?.requests },
      limits: { ...d.resources.limits, ...props.resources?.limits },
    };
    const labels = operatorLabels('controller');
    const selector = operatorSelector();
    const heapMiB = maxOldSpaceMiB(resources.limits.memory);

    if (props.createNamespace ?? d.createNamespace) {
      new k8s.KubeNamespace(this, 'namespace', {
        metadata: {
          name: this.namespace,
          labels: {
            ...operatorLabels('namespace'),
            'pod-security.kubernetes.io/enforce': 'restricted',
            'pod-security.kubernetes.io/enforce-version': 'latest',
          },
        },
      });
    }

    new k8s.KubeServiceAccount(this, 'service-account', {
      metadata: { name: this.name, namespace: this.namespace, labels },
      // The controller talks to the apiserver with this token (cdk8s-plus would set this to false).
      automountServiceAccountToken: true,
    });

    new OperatorRbac(this, 'rbac', {
      name: this.name,
      namespace: this.namespace,
      serviceAccountName: this.name,
      watchNamespaces: props.watchNamespaces ?? [],
    });

    const env: k8s.EnvVar[] = [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'WATCH_NAMESPACES', value: (props.watchNamespaces ?? []).join(',') },
      { name: 'LEADER_ELECTION', value: String(props.leaderElection ?? d.leaderElection) },
      { name: 'LOG_LEVEL', value: props.logLevel ?? d.logLevel },
      { name: 'METRICS_PORT', value: String(metricsPort) },
      { name: 'HEALTH_PORT', value: String(healthPort) },
      {
        name: 'POSTGRES_IMAGE_REPOSITORY',
        value: props.postgresImageRepository ?? d.postgresImageRepository,
      },
      ...(heapMiB ? [{ name: 'NODE_OPTIONS', value: `--max-old-space-size=${heapMiB}` }] : []),
    ];

    this.deployment = new k8s.KubeDeployment(this, 'deployment', {
      metadata: { name: this.name, namespace: this.namespace, labels },
      spec: {
        replicas,
        selector: { matchLabels: selector },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: k8s.IntOrString.fromNumber(0) } },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: this.name,
            automountServiceAccountToken: true,
            ...(props.imagePullSecrets?.length
              ? { imagePullSecrets: props.imagePullSecrets.map((name) => ({ name })) }
              : {}),
            terminationGracePeriodSeconds: 30,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: NON_ROOT_UID,
              runAsGroup: NON_ROOT_UID,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  {
                    weight: 100,
                    podAffinityTerm: {
                      topologyKey: 'kubernetes.io/hostname',
                      labelSelector: { matchLabels: selector },
                    },
                  },
                ],
              },
            },
            containers: [
              {
                name: 'controller',
                image: props.image,
                imagePullPolicy: props.imagePullPolicy ?? d.imagePullPolicy,
                env,
                ports: [
                  { name: 'metrics', containerPort: metricsPort, protocol: 'TCP' },
                  { name: 'health', containerPort: healthPort, protocol: 'TCP' },
                ],
                livenessProbe: {
                  httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('health') },
                  initialDelaySeconds: 5,
                  periodSeconds: 10,
                  failureThreshold: 3,
                },
                readinessProbe: {
                  httpGet: { path: '/readyz', port: k8s.IntOrString.fromString('health') },
                  periodSeconds: 5,
                  failureThreshold: 3,
                },
                resources: {
                  requests: Object.fromEntries(
                    Object.entries(resources.requests).map(([k, v]) => [k, k8s.Quantity.fromString(v)]),
                  ),
                  limits: Object.fromEntries(
                    Object.entries(resources.limits).map(([k, v]) => [k, k8s.Quantity.fromString(v)]),
                  ),
                },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  runAsNonRoot: true,
                  capabilities: { drop: ['ALL'] },
                  seccompProfile: { type: 'RuntimeDefault' },
                },
                volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
              },
            ],
            volumes: [{ name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } }],
          },
        },
      },
    });

    new k8s.KubePodDisruptionBudget(this, 'pdb', {
      metadata: { name: this.name, namespace: this.namespace, labels },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector } },
    });

    new k8s.KubeService(this, 'metrics-service', {
      metadata: {
        name: `${this.name}-metrics`,
        namespace: this.namespace,
        labels: operatorLabels('metrics'),
      },
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: 'metrics', port: metricsPort, targetPort: k8s.IntOrString.fromString('metrics') }],
      },
    });

    if (props.monitoring ?? d.monitoring) {
      new SampleDbMonitoring(this, 'monitoring', {
        namespace: this.namespace,
        serviceMonitor: { operatorName: this.name },
      });
    }

    if (props.deletionProtection ?? d.deletionProtection) {
      new SampleDbDeletionProtection(this, 'deletion-protection', {
        name: `${this.name}-deletion-protection`,
      });
    }
  }
}
