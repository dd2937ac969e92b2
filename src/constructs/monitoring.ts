// Prometheus operator objects for the SampleDB operator and its databases: a ServiceMonitor for the operator's
// /metrics, a PodMonitor for the databases' postgres_exporter sidecars, and a PrometheusRule with the alerts.
// They take effect when applied, without restarting Prometheus (the Prometheus operator reloads it).
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { OPERATOR_NAME, operatorLabels } from './labels.ts';
import { type SampleDbAlertOptions, sampleDbAlertGroups } from './monitoring-rules.ts';
import {
  MONITORING_API_VERSION,
  type PodMonitorSpec,
  type PrometheusRuleSpec,
  type ServiceMonitorSpec,
} from './monitoring-types.ts';

/** Labels of the database pods (src/sampledb/meta.ts); a unit test keeps the two in step. */
export const DATABASE_POD_SELECTOR = {
  'app.kubernetes.io/name': 'sampledb',
  'app.kubernetes.io/component': 'database',
  'app.kubernetes.io/managed-by': 'sampledb-operator',
} as const;
/** The exporter sidecar's container port name (src/sampledb/exporter.ts). */
export const EXPORTER_PORT_NAME = 'metrics';

interface MonitoringObjectProps {
  /** Namespace of the object. Default: `sampledb-system`. */
  readonly namespace?: string;
  /** Extra labels, e.g. the `release` label a Prometheus' `serviceMonitorSelector` or `ruleSelector` asks for. */
  readonly labels?: Record<string, string>;
}

const DEFAULT_NAMESPACE = 'sampledb-system';
const metaOf = (name: string, props: MonitoringObjectProps) => ({
  name,
  namespace: props.namespace ?? DEFAULT_NAMESPACE,
  labels: { ...operatorLabels('monitoring'), ...props.labels },
});

export interface SampleDbOperatorServiceMonitorProps extends MonitoringObjectProps {
  /** Base name of the operator (SampleDbOperator's `name`): the Service is `<name>-metrics`. Default: `sampledb-operator`. */
  readonly operatorName?: string;
  /** Scrape interval. Default: `30s`. */
  readonly interval?: string;
}

/** Scrapes the operator's metrics Service; the `job` label is the Service name, `sampledb-operator-metrics`. */
export class SampleDbOperatorServiceMonitor extends Construct {
  readonly spec: ServiceMonitorSpec;
  constructor(scope: Construct, id: string, props: SampleDbOperatorServiceMonitorProps = {}) {
    super(scope, id);
    const operatorName = props.operatorName ?? OPERATOR_NAME;
    this.spec = {
      selector: {
        matchLabels: { 'app.kubernetes.io/name': OPERATOR_NAME, 'app.kubernetes.io/component': 'metrics' },
      },
      namespaceSelector: { matchNames: [props.namespace ?? DEFAULT_NAMESPACE] },
      // The SampleDB metrics carry the SampleDB's namespace: keep it instead of the operator pod's.
      endpoints: [
        { port: 'metrics', path: '/metrics', interval: props.interval ?? '30s', honorLabels: true },
      ],
    };
    new ApiObject(this, 'resource', {
      apiVersion: MONITORING_API_VERSION,
      kind: 'ServiceMonitor',
      metadata: metaOf(`${operatorName}-metrics`, props),
      spec: this.spec,
    });
  }
}

export interface SampleDbPodMonitorProps extends MonitoringObjectProps {
  /** Name. Default: `sampledb-databases`. */
  readonly name?: string;
  /** Namespaces whose SampleDBs are scraped. Default: all. */
  readonly databaseNamespaces?: readonly string[];
  /** Scrape interval. Default: `30s`. */
  readonly interval?: string;
}

/**
 * Scrapes the postgres_exporter sidecar of every SampleDB with `spec.monitoring.exporter.enabled` (pods without
 * the sidecar have no `metrics` port, so they are no target). Adds the label `sampledb` (the SampleDB's name).
 */
export class SampleDbPodMonitor extends Construct {
  readonly spec: PodMonitorSpec;
  constructor(scope: Construct, id: string, props: SampleDbPodMonitorProps = {}) {
    super(scope, id);
    this.spec = {
      selector: { matchLabels: { ...DATABASE_POD_SELECTOR } },
      namespaceSelector: props.databaseNamespaces ? { matchNames: props.databaseNamespaces } : { any: true },
      podMetricsEndpoints: [
        {
          port: EXPORTER_PORT_NAME,
          path: '/metrics',
          interval: props.interval ?? '30s',
          relabelings: [
            {
              sourceLabels: ['__meta_kubernetes_pod_label_app_kubernetes_io_instance'],
              targetLabel: 'sampledb',
              action: 'replace',
            },
          ],
        },
      ],
    };
    new ApiObject(this, 'resource', {
      apiVersion: MONITORING_API_VERSION,
      kind: 'PodMonitor',
      metadata: metaOf(props.name ?? 'sampledb-databases', props),
      spec: this.spec,
    });
  }
}

export interface SampleDbPrometheusRuleProps extends MonitoringObjectProps, SampleDbAlertOptions {
  /** Name. Default: `sampledb-alerts`. */
  readonly name?: string;
}

/** The SampleDB alerts (see docs/runbooks.md); thresholds are props. */
export class SampleDbPrometheusRule extends Construct {
  readonly spec: PrometheusRuleSpec;
  constructor(scope: Construct, id: string, props: SampleDbPrometheusRuleProps = {}) {
    super(scope, id);
    this.spec = { groups: sampleDbAlertGroups(props) };
    new ApiObject(this, 'resource', {
      apiVersion: MONITORING_API_VERSION,
      kind: 'PrometheusRule',
      metadata: metaOf(props.name ?? 'sampledb-alerts', props),
      spec: this.spec,
    });
  }
}

export interface SampleDbMonitoringProps extends MonitoringObjectProps {
  readonly serviceMonitor?: Omit<SampleDbOperatorServiceMonitorProps, keyof MonitoringObjectProps>;
  readonly podMonitor?: Omit<SampleDbPodMonitorProps, keyof MonitoringObjectProps>;
  readonly rules?: Omit<SampleDbPrometheusRuleProps, keyof MonitoringObjectProps>;
}

/** All three, in one namespace with the same extra labels. Needs the Prometheus operator's CRDs in the cluster. */
export class SampleDbMonitoring extends Construct {
  constructor(scope: Construct, id: string, props: SampleDbMonitoringProps = {}) {
    super(scope, id);
    const common = {
      ...(props.namespace ? { namespace: props.namespace } : {}),
      ...(props.labels ? { labels: props.labels } : {}),
    };
    new SampleDbOperatorServiceMonitor(this, 'service-monitor', { ...common, ...props.serviceMonitor });
    new SampleDbPodMonitor(this, 'pod-monitor', { ...common, ...props.podMonitor });
    // The alerts' job matches the ServiceMonitor's Service unless set.
    const operatorJob = `${props.serviceMonitor?.operatorName ?? OPERATOR_NAME}-metrics`;
    new SampleDbPrometheusRule(this, 'rules', { ...common, operatorJob, ...props.rules });
  }
}
