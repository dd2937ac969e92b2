// Labels shared by every object the constructs emit, following app.kubernetes.io conventions.
import { LABELS, OPERATOR_NAME } from '../api/index.ts';

export { OPERATOR_NAME };

export function operatorLabels(component: string): Record<string, string> {
  return {
    [LABELS.name]: OPERATOR_NAME,
    [LABELS.component]: component,
    [LABELS.partOf]: OPERATOR_NAME,
    [LABELS.managedBy]: 'cdk8s',
  };
}

/** The subset used as a selector: stable across versions, so Deployments can be upgraded in place. */
export function operatorSelector(): Record<string, string> {
  return { [LABELS.name]: OPERATOR_NAME, [LABELS.component]: 'controller' };
}
