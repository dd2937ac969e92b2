// The SampleDB API: schemas, types, defaults, validation and CRDs. Imports nothing else of this project.
export * from './conditions.ts';
export * from './crd.ts';
export * from './cron.ts';
export * from './defaults.ts';
export * from './endpoint.ts';
export * from './formats.ts';
export * from './identity.ts';
export * from './kube-object.ts';
export * from './monitoring.ts';
export * from './operator-settings.ts';
export * from './permissions.ts';
export * from './quantity.ts';
export * from './replication.ts';
export * from './sampledb.ts';
export * from './sampledb-backup.ts';
export { rulesOf, type ValidationRule } from './schema-kit.ts';
export * from './upgrade.ts';
export * from './validate.ts';
