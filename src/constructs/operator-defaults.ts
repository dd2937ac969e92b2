// The SampleDbOperator's defaults, shared by its sub-constructs, the Pulumi stack config and the Helm chart. The
// ones that are controller settings come from the environment contract (src/api/operator-settings.ts), so the
// Deployment and the controller cannot disagree about them.
import { OPERATOR_SETTINGS } from '../api/index.ts';
import { OPERATOR_NAME } from './labels.ts';

export interface OperatorResources {
  readonly requests?: { readonly cpu?: string; readonly memory?: string };
  readonly limits?: { readonly cpu?: string; readonly memory?: string };
}

export const OPERATOR_DEFAULTS = {
  namespace: 'sampledb-system',
  createNamespace: true,
  name: OPERATOR_NAME,
  replicas: 2,
  leaderElection: true,
  watchNamespaces: OPERATOR_SETTINGS.watchNamespaces.default,
  logLevel: OPERATOR_SETTINGS.logLevel.default,
  imagePullPolicy: 'IfNotPresent',
  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
  metricsPort: OPERATOR_SETTINGS.metricsPort.default,
  healthPort: OPERATOR_SETTINGS.healthPort.default,
  deletionProtection: true,
  postgresImageRepository: OPERATOR_SETTINGS.postgresImageRepository.default,
  monitoring: false,
} as const;
