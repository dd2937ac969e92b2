#!/usr/bin/env bash
# `npm ci`, skipped when node_modules already matches package-lock.json (so repeated runs are fast).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

stamp=node_modules/.sampledb-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [[ -f $stamp && "$(cat "$stamp")" == "$want" && -x node_modules/.bin/node ]]; then
  echo "npm deps: node_modules matches package-lock.json"
else
  echo "npm deps: npm ci"
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi
echo "npm deps: Node $(node_modules/.bin/node --version) for the project (machine: $(node --version))"
