// Compile-time check (tsc -p tsconfig.imports.json) that the classes generated into imports/ by `cdk8s import`
// describe the same API as src/api. The generated types use enums where src/api uses string unions, so the check
// is one-way for values (anything typed against imports/ is a valid src/api spec) and exact for field names up to
// case: cdk8s import camel-cases acronyms (`initSQL` becomes `initSql`, mapped back in toJson).
import type {
  SampleDbSpecBackup as ImportedBackup,
  SampleDbBackupSpec as ImportedBackupSpec,
  SampleDbSpecBootstrap as ImportedBootstrap,
  SampleDbSpec as ImportedSpec,
} from '../../imports/sampledb.io.ts';
import type { SampleDbBackupSpec, SampleDbSpec } from '../../src/api/index.ts';

type Assignable<From, To> = [From] extends [To] ? true : false;
type Keys<T> = Lowercase<keyof T & string>;
type SameKeys<A, B> = [Keys<A>] extends [Keys<B>] ? ([Keys<B>] extends [Keys<A>] ? true : false) : false;
type Defined<T> = Exclude<T, undefined>;

export const importedSpecFitsApi: Assignable<ImportedSpec, SampleDbSpec> = true;
export const specFields: SameKeys<ImportedSpec, SampleDbSpec> = true;
export const backupFields: SameKeys<ImportedBackup, Defined<SampleDbSpec['backup']>> = true;
export const bootstrapFields: SameKeys<ImportedBootstrap, Defined<SampleDbSpec['bootstrap']>> = true;
export const backupSpecFields: SameKeys<ImportedBackupSpec, SampleDbBackupSpec> = true;
