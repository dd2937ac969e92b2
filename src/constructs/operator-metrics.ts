// The Service in front of the controller's /metrics. The construct is the Service itself, so its construct path
// (and the Helm chart's template name) stays `operator/metrics-service`.
import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { operatorLabels, operatorSelector } from './labels.ts';

export interface OperatorMetricsProps {
  /** Name of the Service. */
  readonly name: string;
  readonly namespace: string;
  /** The controller's metrics port (the container port is referred to by its name, `metrics`). */
  readonly port: number;
}

/** A ClusterIP Service selecting every controller replica: each one serves its own metrics, leader or not. */
export class OperatorMetrics extends k8s.KubeService {
  constructor(scope: Construct, id: string, props: OperatorMetricsProps) {
    super(scope, id, {
      metadata: { name: props.name, namespace: props.namespace, labels: operatorLabels('metrics') },
      spec: {
        type: 'ClusterIP',
        selector: operatorSelector(),
        ports: [{ name: 'metrics', port: props.port, targetPort: k8s.IntOrString.fromString('metrics') }],
      },
    });
  }
}
