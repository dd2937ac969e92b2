#!/usr/bin/env bash
# Regenerates imports/ from the synthesized CRDs with `cdk8s import` (offline: it reads dist/, downloads nothing).
#   scripts/import.sh           rewrite imports/
#   scripts/import.sh --check   fail if imports/ is not what the current dist/ generates
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CDK8S_CHECK_UPGRADE=false

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
./node_modules/.bin/cdk8s import dist/0000-sampledb-crds.k8s.yaml --output "$out" >/dev/null

if [[ "${1:-}" == "--check" ]]; then
  if ! diff -ru imports "$out"; then
    echo "imports/ is stale: run 'npm run import' and commit the result" >&2
    exit 1
  fi
  echo "imports/ is fresh"
else
  rm -rf imports
  mkdir -p imports
  cp -r "$out"/. imports/
  echo "imports/ regenerated"
fi
