// The controller's Deployment and its PodDisruptionBudget. Each construct is the object itself (an L1 subclass), so
// its construct path, which the Helm chart's template names come from, stays `operator/deployment` and
// `operator/pdb`.
import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import {
  POD_IDENTITY_ENV,
  parseQuantity,
  type RenderedOperatorSettings,
  renderOperatorSettings,
} from '../api/index.ts';
import { operatorLabels, operatorSelector } from './labels.ts';
import { OPERATOR_DEFAULTS, type OperatorResources } from './operator-defaults.ts';

/** The distroless image's `nonroot` user; the Deployment pins it so PodSecurity `restricted` holds. */
const NON_ROOT_UID = 65532;

export interface OperatorDeploymentProps {
  /** Name of the Deployment. */
  readonly name: string;
  readonly namespace: string;
  /** Controller image, ideally pinned by digest. */
  readonly image: string;
  /** ServiceAccount the pods run as (its token is mounted: the controller talks to the apiserver). */
  readonly serviceAccountName: string;
  /** The controller's settings, written into its environment; the ports also name the container's ports. */
  readonly settings: RenderedOperatorSettings;
  /** Default: `2`. */
  readonly replicas?: number;
  /** Default: `IfNotPresent`. */
  readonly imagePullPolicy?: 'IfNotPresent' | 'Always' | 'Never';
  /** Default: none. */
  readonly imagePullSecrets?: readonly string[];
  /** Merged field by field over the default: requests 100m CPU / 128Mi, limit 512Mi memory. */
  readonly resources?: OperatorResources;
}

/** V8's heap limit from the container memory limit, leaving room for buffers and native memory. */
function maxOldSpaceMiB(memoryLimit: string | undefined): number | undefined {
  const bytes = memoryLimit ? parseQuantity(memoryLimit) : undefined;
  return bytes ? Math.max(64, Math.floor((bytes / 2 ** 20) * 0.75)) : undefined;
}

const quantities = (list: Record<string, string>) =>
  Object.fromEntries(Object.entries(list).map(([k, v]) => [k, k8s.Quantity.fromString(v)]));

/** The controller container: its environment is the settings contract, plus the heap size from the memory limit. */
function controllerContainer(props: OperatorDeploymentProps): k8s.Container {
  const d = OPERATOR_DEFAULTS.resources;
  const resources = {
    requests: { ...d.requests, ...props.resources?.requests },
    limits: { ...d.limits, ...props.resources?.limits },
  };
  const heapMiB = maxOldSpaceMiB(resources.limits.memory);
  const env: k8s.EnvVar[] = [
    ...Object.values(POD_IDENTITY_ENV).map(({ env: name, fieldPath }) => ({
      name,
      valueFrom: { fieldRef: { fieldPath } },
    })),
    ...renderOperatorSettings(props.settings),
    ...(heapMiB ? [{ name: 'NODE_OPTIONS', value: `--max-old-space-size=${heapMiB}` }] : []),
  ];
  return {
    name: 'controller',
    image: props.image,
    imagePullPolicy: props.imagePullPolicy ?? OPERATOR_DEFAULTS.imagePullPolicy,
    env,
    ports: [
      { name: 'metrics', containerPort: props.settings.metricsPort, protocol: 'TCP' },
      { name: 'health', containerPort: props.settings.healthPort, protocol: 'TCP' },
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
    resources: { requests: quantities(resources.requests), limits: quantities(resources.limits) },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
  };
}

/**
 * The controller: PodSecurity `restricted`, probes on the health port, replicas spread over nodes, rolled without
 * ever dropping below the current number of ready replicas.
 */
export class OperatorDeployment extends k8s.KubeDeployment {
  constructor(scope: Construct, id: string, props: OperatorDeploymentProps) {
    const labels = operatorLabels('controller');
    const selector = operatorSelector();
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace, labels },
      spec: {
        replicas: props.replicas ?? OPERATOR_DEFAULTS.replicas,
        selector: { matchLabels: selector },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: k8s.IntOrString.fromNumber(0) } },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: props.serviceAccountName,
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
            containers: [controllerContainer(props)],
            volumes: [{ name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } }],
          },
        },
      },
    });
  }
}

export interface OperatorDisruptionBudgetProps {
  /** Name of the budget (the Deployment's). */
  readonly name: string;
  readonly namespace: string;
}

/** At most one controller replica evicted at a time (a drain never takes the leader and its standby together). */
export class OperatorDisruptionBudget extends k8s.KubePodDisruptionBudget {
  constructor(scope: Construct, id: string, props: OperatorDisruptionBudgetProps) {
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace, labels: operatorLabels('controller') },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: operatorSelector() } },
    });
  }
}
