// `sampledb-operator/pulumi`: Pulumi components for other Pulumi programs. Needs @pulumi/pulumi and
// @pulumi/kubernetes (optional peer dependencies of this package).
export { SampleDb, type SampleDbArgs, SampleDbOperator, type SampleDbOperatorArgs } from './components.ts';
