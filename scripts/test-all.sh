#!/usr/bin/env bash
# One command from a fresh clone to a full test run: installs what the suite needs, idempotently, then runs it.
#   - Debian packages: postgresql (data-path tests), shellcheck (lint), openssl (test PKI)
#   - npm packages: npm ci (brings Node 24 as the `node` package; the machine's Node 20 only runs npm)
#   - control-plane, Pulumi and packaging-tool binaries: built from Go modules into ~/.cache/sampledb-operator
#     (skipped when cached; scripts/test.sh runs the builds)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-system-deps.sh
bash scripts/install-npm-deps.sh
exec bash scripts/test.sh
