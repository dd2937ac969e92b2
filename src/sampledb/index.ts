// Desired state of a SampleDB's children (pure builders), the data-path scripts, and the status computation.
export * from './backup-job.ts';
export * from './connection.ts';
export * from './credentials.ts';
export * from './init-job.ts';
export * from './instance.ts';
export * from './meta.ts';
export * from './names.ts';
export * from './pod.ts';
export * from './postgres-config.ts';
export * from './scripts/backup.ts';
export * from './scripts/init.ts';
export * from './scripts/restore.ts';
export * from './security.ts';
export * from './services.ts';
export * from './statefulset.ts';
export * from './status.ts';
