#!/usr/bin/env bash
# Synthesizes dist/ with `cdk8s synth` (the app is src/app.ts, see cdk8s.yaml).
#   scripts/synth.sh           rewrite dist/
#   scripts/synth.sh --check   fail if dist/ differs from what the current sources synthesize
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CDK8S_CHECK_UPGRADE=false

if [[ "${1:-}" == "--check" ]]; then
  before=$(mktemp -d)
  trap 'rm -rf "$before"' EXIT
  cp -r dist/. "$before"/
  ./node_modules/.bin/cdk8s synth >/dev/null
  if ! diff -ru "$before" dist; then
    echo "dist/ is stale: run 'npm run synth' and commit the result" >&2
    exit 1
  fi
  echo "dist/ is fresh"
else
  ./node_modules/.bin/cdk8s synth
fi
