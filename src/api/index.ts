// The SampleDB API: schemas, types, defaults, validation and CRDs. Imports nothing else of this project.
export * from './crd.ts';
export * from './defaults.ts';
export * from './quantity.ts';
export * from './sampledb.ts';
export * from './sampledb-backup.ts';
export { type ValidationRule, rulesOf } from './schema-kit.ts';
export * from './validate.ts';
