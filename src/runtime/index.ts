export { Backoff, type BackoffOptions, exponentialDelay } from './backoff.ts';
export { InformerCache, type InformerCacheOptions } from './cache.ts';
export {
  Client,
  type ClientOptions,
  ConflictError,
  type EventInput,
  eventsResource,
} from './client.ts';
export { type Clock, realClock, sleep } from './clock.ts';
export {
  accessFromKubeconfig,
  type ClusterAccess,
  inClusterAccess,
  type KubeConfigLike,
  kubeconfigFileAccess,
  type TlsSettings,
} from './cluster-access.ts';
export * from './conditions.ts';
export {
  Controller,
  type ControllerOptions,
  controllerOwnerRefs,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
  type Watches,
} from './controller.ts';
export { describeError } from './errors.ts';
export { EventSink, type EventSinkOptions, type EventWrite } from './event-sink.ts';
export { type Check, HealthServer, type HealthServerOptions } from './health.ts';
export {
  ApiError,
  isNamespaceTerminating,
  isStatus,
  KubeHttp,
  type KubeHttpOptions,
  type WatchEvent,
} from './http.ts';
export * from './kinds.ts';
export {
  kubeLeaseApi,
  LeaderElector,
  type LeaderElectorOptions,
  type LeaseApi,
  leaseResource,
} from './leader.ts';
export { createLogger, type Logger, silentLogger } from './logger.ts';
export { type LeaderElectionOptions, Manager, type ManagerOptions } from './manager.ts';
export { type RuntimeMetrics, runtimeMetrics } from './metrics.ts';
export { WorkQueue, type WorkQueueOptions } from './queue.ts';
export * from './resource.ts';
export { byNamespace, byOwnerUid, type IndexFn, Store, type StoreOptions } from './store.ts';
export { metaTime, microTime } from './time.ts';
export { type Change, type ChangeHandler, diffRelist, Watcher, type WatcherOptions } from './watcher.ts';
