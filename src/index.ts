// Library entry point (`import { SampleDbOperator } from 'sampledb-operator'`): the constructs and the API types.
// The controller and the CLI are separate entry points and are not loaded from here.
export * from './api/index.ts';
export * from './constructs/index.ts';
