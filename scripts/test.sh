#!/usr/bin/env bash
# The whole test suite, assuming dependencies are installed (scripts/test-all.sh installs them first):
# lint, type-check, freshness of dist/, imports/, docs/api.md, the Helm chart and the OLM bundle, unit tests, then
# integration tests on a real control plane (and with real helm and operator-framework/api validators).
# Ends with one summary line "tests: N passed, N failed".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CDK8S_CHECK_UPGRADE=false
PATH="$PWD/node_modules/.bin:$PATH"

passed=0
failed=0
step() { printf '\n=== %s ===\n' "$*"; }

# Runs a test script (node's test runner, see package.json) and adds its counts to the totals.
run_tests() {
  local log status=0
  log=$(mktemp)
  "$@" 2>&1 | tee "$log" || status=$?
  local p f
  p=$(awk '/^ℹ pass / { print $3 }' "$log" | tail -n1)
  f=$(awk '/^ℹ fail / { print $3 }' "$log" | tail -n1)
  rm -f "$log"
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [[ $status -ne 0 && ${f:-0} -eq 0 ]]; then failed=$((failed + 1)); fi
}

step "lint (biome, shellcheck)"
biome check .
shellcheck -x scripts/*.sh scripts/lib/*.sh .ci/run

step "build the library (lib/, what the npm package exports)"
rm -rf lib
tsc -p tsconfig.build.json

step "type-check (the package self-import in test/unit/package needs lib/ first)"
tsc -p tsconfig.json --noEmit
tsc -p tsconfig.imports.json

step "dist/, imports/, docs/api.md, the Helm chart and the OLM bundle are fresh"
bash scripts/synth.sh --check
bash scripts/import.sh --check
node scripts/api-docs.ts --check
node scripts/package.ts --check

step "unit tests"
run_tests npm run -s test:unit

step "control-plane binaries (cold: ~17 min on 2 cores, then cached)"
bash scripts/build-controlplane.sh

step "pulumi binaries: CLI and Kubernetes provider (cold: ~35 min on 2 cores, then cached)"
bash scripts/build-pulumi.sh

step "packaging tools: helm and olm-validate (cold: 540 CPU-seconds, ~5 min on 2 idle cores, 17 min on busy ones; then cached)"
bash scripts/build-packaging-tools.sh

step "integration tests (real kube-apiserver, etcd, controllers, kwok; real PostgreSQL)"
run_tests npm run -s test:integration

echo
echo "tests: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
