// Labels shared by every object the constructs emit, following app.kubernetes.io conventions.

export const OPERATOR_NAME = 'sampledb-operator';

export function operatorLabels(component: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': OPERATOR_NAME,
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/part-of': OPERATOR_NAME,
    'app.kubernetes.io/managed-by': 'cdk8s',
  };
}

/** The subset used as a selector: stable across versions, so Deployments can be upgraded in place. */
export function operatorSelector(): Record<string, string> {
  return { 'app.kubernetes.io/name': OPERATOR_NAME, 'app.kubernetes.io/component': 'controller' };
}
