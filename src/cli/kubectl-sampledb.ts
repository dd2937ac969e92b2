#!/usr/bin/env node
// The `kubectl-sampledb` executable (package.json "bin"): kubectl finds it on PATH and runs it as `kubectl sampledb`.
import { run } from './main.ts';

// The plugin's only reader of process.env and process.argv.
process.exitCode = await run(
  process.argv.slice(2),
  {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  },
  process.env,
);
