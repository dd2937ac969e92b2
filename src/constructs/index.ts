// The importable cdk8s library: constructs for the CRDs, the operator and SampleDB instances.
export * from './crds.ts';
export * from './deletion-protection.ts';
export * from './monitoring.ts';
export * from './monitoring-dashboard.ts';
export * from './monitoring-rules.ts';
export * from './monitoring-types.ts';
export * from './operator.ts';
export * from './operator-defaults.ts';
export * from './operator-deployment.ts';
export * from './operator-metrics.ts';
export * from './rbac.ts';
export * from './sampledb.ts';
