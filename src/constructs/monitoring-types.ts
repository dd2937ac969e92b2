// The few fields of the Prometheus operator's CRDs (monitoring.coreos.com/v1) these constructs write, typed by hand
// from the CRDs' documented schema: importing the whole CRDs would add a large generated file for four objects.
export const MONITORING_API_VERSION = 'monitoring.coreos.com/v1';

export interface LabelSelector {
  readonly matchLabels?: Record<string, string>;
}

/** A relabeling step (Prometheus relabel_config, in the operator's camelCase). */
export interface RelabelConfig {
  readonly sourceLabels?: readonly string[];
  readonly separator?: string;
  readonly targetLabel?: string;
  readonly regex?: string;
  readonly replacement?: string;
  readonly action?: 'replace' | 'keep' | 'drop' | 'labelmap' | 'labeldrop' | 'labelkeep';
}

export interface Endpoint {
  /** Name of the Service port (ServiceMonitor) or container port (PodMonitor). */
  readonly port: string;
  readonly path?: string;
  readonly interval?: string;
  readonly scrapeTimeout?: string;
  /** Keep the target's own `namespace` labels (the operator's metrics carry the SampleDB's namespace). */
  readonly honorLabels?: boolean;
  readonly relabelings?: readonly RelabelConfig[];
}

export interface ServiceMonitorSpec {
  readonly selector: LabelSelector;
  readonly namespaceSelector?: { readonly matchNames?: readonly string[]; readonly any?: boolean };
  readonly endpoints: readonly Endpoint[];
  readonly jobLabel?: string;
}

export interface PodMonitorSpec {
  readonly selector: LabelSelector;
  readonly namespaceSelector?: { readonly matchNames?: readonly string[]; readonly any?: boolean };
  readonly podMetricsEndpoints: readonly Endpoint[];
  readonly jobLabel?: string;
}

export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export interface RuleGroup {
  readonly name: string;
  readonly interval?: string;
  readonly rules: readonly AlertingRule[];
}

export interface PrometheusRuleSpec {
  readonly groups: readonly RuleGroup[];
}
