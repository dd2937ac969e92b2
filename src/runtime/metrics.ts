import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * All runtime metrics, named as controller-runtime and client-go name them so existing dashboards and alerts apply.
 * Created once per registry: several controllers and queues share one registry without double registration.
 */
export interface RuntimeMetrics {
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly workqueueDepth: Gauge<'name' | 'controller'>;
  readonly workqueueAdds: Counter<'name' | 'controller'>;
  readonly workqueueQueueDuration: Histogram<'name' | 'controller'>;
  readonly workqueueWorkDuration: Histogram<'name' | 'controller'>;
  readonly workqueueRetries: Counter<'name' | 'controller'>;
  readonly leaderStatus: Gauge<'name'>;
  readonly restClientRequests: Counter<'code' | 'method' | 'host'>;
  readonly watchRestarts: Counter<'resource' | 'reason'>;
  readonly eventsDropped: Counter;
}

const byRegistry = new WeakMap<Registry, RuntimeMetrics>();

// Buckets of controller-runtime (reconcile time) and client-go's workqueue (10^-8 .. 10^1 s).
const reconcileBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5,
  1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
const queueBuckets = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

export function runtimeMetrics(registry: Registry): RuntimeMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const metrics: RuntimeMetrics = {
    reconcileTotal: new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    }),
    reconcileTime: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: reconcileBuckets,
      registers,
    }),
    workqueueDepth: new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name', 'controller'],
      registers,
    }),
    workqueueAdds: new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name', 'controller'],
      registers,
    }),
    workqueueQueueDuration: new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name', 'controller'],
      buckets: queueBuckets,
      registers,
    }),
    workqueueWorkDuration: new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['name', 'controller'],
      buckets: queueBuckets,
      registers,
    }),
    workqueueRetries: new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name', 'controller'],
      registers,
    }),
    leaderStatus: new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
      labelNames: ['name'],
      registers,
    }),
    restClientRequests: new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by status code, method, and host',
      labelNames: ['code', 'method', 'host'],
      registers,
    }),
    watchRestarts: new Counter({
      name: 'runtime_watch_restarts_total',
      help: 'Watch restarts by cause (stall, gone, error, closed)',
      labelNames: ['resource', 'reason'],
      registers,
    }),
    eventsDropped: new Counter({
      name: 'runtime_events_dropped_total',
      help: 'Events not recorded because the event queue was full',
      registers,
    }),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
