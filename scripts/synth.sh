#!/usr/bin/env bash
# Synthesizes dist/ with `cdk8s synth` (the app is src/app.ts, see cdk8s.yaml) and the Grafana dashboard
# monitoring/grafana-dashboard.json (scripts/dashboard.ts).
#   scripts/synth.sh           rewrite dist/
#   scripts/synth.sh --check   fail if dist/ or the dashboard differ from what the current sources make
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
  ./node_modules/.bin/node scripts/dashboard.ts --check
else
  ./node_modules/.bin/cdk8s synth
  ./node_modules/.bin/node scripts/dashboard.ts
fi
