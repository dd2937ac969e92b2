export {
  type Access,
  type AccessRecord,
  type AuditEvent,
  accessesOf,
  accessKey,
  parseAuditLog,
  readAuditLog,
} from './audit.ts';
export { assetVariable, type BinaryName, locateBinaries } from './binaries.ts';
export { ControlPlane, type ControlPlaneOptions } from './control-plane.ts';
export { workloadControllers } from './controllers.ts';
export { type KubectlResult, runKubectl } from './kubectl.ts';
export { fakeNodeAnnotation, type KwokSelectorRequirement } from './kwok.ts';
export { freePorts } from './ports.ts';
export {
  describeRequests,
  parseRequestCounts,
  type RequestSeries,
  requestDelta,
  sumRequests,
  writeVerbs,
} from './request-metrics.ts';
export { defaultStorageClassName, fakeProvisioner } from './volume-binder.ts';
export { type PollOptions, pollUntil } from './wait.ts';
