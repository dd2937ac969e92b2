#!/usr/bin/env bash
# The whole test suite, assuming dependencies are installed (scripts/test-all.sh installs them first):
# lint, type-check, freshness of dist/, imports/, docs/api.md, the Helm chart and the OLM bundle, unit tests,
# integration tests on a real control plane (and with real helm and operator-framework/api validators), then the
# e2e tier on a real node (root only; SAMPLEDB_SKIP_E2E=1 skips it).
# Ends with one summary line "tests: N passed, N failed".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CDK8S_CHECK_UPGRADE=false
PATH="$PWD/node_modules/.bin:$PATH"

passed=0
failed=0
step() { printf '\n=== %s ===\n' "$*"; }

# Adds the counts of a finished test run (its log and exit status) to the totals; a run that failed without a
# failing test (a crash, a global setup that threw) counts as one failure.
count_tests() {
  local log=$1 status=$2 p f
  p=$(awk '/^ℹ pass / { print $3 }' "$log" | tail -n1)
  f=$(awk '/^ℹ fail / { print $3 }' "$log" | tail -n1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [[ $status -ne 0 && ${f:-0} -eq 0 ]]; then failed=$((failed + 1)); fi
}

# Runs a test script (node's test runner, see package.json) and adds its counts to the totals.
run_tests() {
  local log status=0
  log=$(mktemp)
  "$@" 2>&1 | tee "$log" || status=$?
  count_tests "$log" "$status"
  rm -f "$log"
}

step "lint (biome, shellcheck)"
biome check .
shellcheck -x scripts/*.sh scripts/lib/*.sh scripts/images/*.sh .ci/run

step "build the library (lib/, what the npm package exports)"
rm -rf lib
tsc -p tsconfig.build.json
# The image runs lib/operator.js: lib/main.js and its imports in one file (ADR 0011).
node scripts/bundle-operator.ts

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

# The real node's images build meanwhile: mostly downloads and unpacking, which overlap the CPU-bound Go builds.
e2e=true
if [[ $(id -u) -ne 0 ]]; then
  e2e=false
  e2e_reason="the real node needs root"
elif [[ ${SAMPLEDB_SKIP_E2E:-} == 1 ]]; then
  e2e=false
  e2e_reason="SAMPLEDB_SKIP_E2E=1"
fi
images_pid=
if [[ $e2e == true ]]; then
  step "real-node images, in the background (cold: ~3-5 min, then cached)"
  # lib/ was just compiled from these sources: the operator image takes it instead of compiling again.
  SAMPLEDB_OPERATOR_LIB="$PWD/lib" nice -n 10 bash scripts/build-images.sh > /dev/null &
  images_pid=$!
fi

step "control-plane binaries (cold: ~22 min on 2 cores, then cached)"
bash scripts/build-controlplane.sh

# The Pulumi binaries are needed only by the two Pulumi tests, which wait for this build (SAMPLEDB_PULUMI_BUILD_STATUS
# receives its exit status). Niced, it takes the CPU the test tiers leave idle while they wait on their clusters.
step "pulumi binaries: CLI and Kubernetes provider, in the background (cold: ~35 min on 2 cores, then cached)"
pulumi_status=$(mktemp -u)
export SAMPLEDB_PULUMI_BUILD_STATUS=$pulumi_status
( status=0; nice -n 19 bash scripts/build-pulumi.sh || status=$?; echo "$status" > "$pulumi_status.tmp"; mv "$pulumi_status.tmp" "$pulumi_status" ) &
pulumi_pid=$!

if [[ -n $images_pid ]]; then
  step "real-node images"
  wait "$images_pid"
fi

# `npm run test:integration` with the Pulumi test held back: it waits for the background build, and run in the
# middle of the tier it would hold up every file after it. It runs after the e2e tier instead.
integration=(node --test --test-concurrency=1 --test-global-setup=test/integration/support/global-setup.ts --test-reporter=spec)
mapfile -t integration_files < <(find test/integration -name '*.test.ts' ! -path 'test/integration/deploy/pulumi.test.ts' | sort)

step "packaging tools: helm and olm-validate (cold: 540 CPU-seconds, ~5 min on 2 idle cores, 17 min on busy ones; then cached)"
bash scripts/build-packaging-tools.sh

# The e2e tier runs alongside the integration tier: they use separate control planes (the real node's and the kwok
# tier's, each on its own free ports), and the e2e files spend most of their time waiting for pods, which leaves CPU
# the integration tier uses. Its output goes to a log that is printed whole once it ends, so the two do not interleave.
e2e_pid=
e2e_log=
if [[ $e2e == true ]]; then
  step "e2e tests on a real node, in the background alongside the integration tier (output follows that tier)"
  e2e_log=$(mktemp)
  e2e_started=$SECONDS
  # Its own session, so that a failed or interrupted run stops the whole tier (and so the real node, whose
  # global teardown restores the machine) and leaves nothing running.
  setsid npm run -s test:e2e > "$e2e_log" 2>&1 &
  e2e_pid=$!
  stop_e2e() { if kill -0 "$e2e_pid" 2> /dev/null; then kill -TERM -- "-$e2e_pid" 2> /dev/null || true; wait "$e2e_pid" || true; fi; }
  trap stop_e2e EXIT
  trap 'stop_e2e; exit 130' INT
  trap 'stop_e2e; exit 143' TERM
fi

step "integration tests (real kube-apiserver, etcd, controllers, kwok; real PostgreSQL)"
integration_started=$SECONDS
run_tests "${integration[@]}" "${integration_files[@]}"
integration_ended=$SECONDS
echo "integration tier: $((integration_ended - integration_started)) s"

if [[ $e2e == true ]]; then
  step "e2e tests on a real node (kubelet, containerd, CNI bridge; real PostgreSQL pods)"
  if kill -0 "$e2e_pid" 2> /dev/null; then echo "(waiting for the e2e tier, started $((SECONDS - e2e_started)) s ago)"; fi
  e2e_status=0
  wait "$e2e_pid" || e2e_status=$?
  cat "$e2e_log"
  count_tests "$e2e_log" "$e2e_status"
  rm -f "$e2e_log"
  trap - EXIT INT TERM
  echo "e2e tier: $((SECONDS - e2e_started)) s, ending $((SECONDS - integration_ended)) s after the integration tier"
else
  step "e2e tests skipped: $e2e_reason"
fi

step "Pulumi tests (wait for the background build)"
run_tests "${integration[@]}" test/integration/deploy/pulumi.test.ts
if [[ $e2e == true ]]; then
  run_tests npm run -s test:e2e:standalone
fi
wait "$pulumi_pid" || true
rm -f "$pulumi_status"

echo
echo "tests: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
