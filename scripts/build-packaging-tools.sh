#!/usr/bin/env bash
# Builds the tools that prove the packages (test/integration/packaging/) from the Go module test/controlplane/packaging:
# the helm CLI (helm.sh/helm/v4) and olm-validate (its ./olm-validate: operator-framework/api's bundle validators).
# One go build for both, so the Kubernetes libraries they share compile once. Output goes to a cache outside the
# repo and is reused while the module's go.mod, go.sum and Go files are unchanged.
#
#   scripts/build-packaging-tools.sh          build what is missing, print the bin directory on the last line
#   scripts/build-packaging-tools.sh --print  print the bin directory only (no build)
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
modules="$repo_root/test/controlplane"
helm_version=$(awk '$1 == "helm.sh/helm/v4" { print $2 }' "$modules/packaging/go.mod" | head -n1)
api_version=$(awk '$1 == "github.com/operator-framework/api" { print $2 } $1 == "require" && $2 == "github.com/operator-framework/api" { print $3 }' "$modules/packaging/go.mod" | head -n1)
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/sampledb-operator"
bin_dir="$cache_root/packaging/bin"
log_prefix=build-packaging-tools
# shellcheck source=scripts/lib/go-build.sh
source "$repo_root/scripts/lib/go-build.sh"

if [[ "${1:-}" == "--print" ]]; then
  echo "$bin_dir"
  exit 0
fi

go_build_env

# The -X flags of helm's Makefile, so `helm version` reports the release (olm-validate has no such variable).
build_module packaging "helm $helm_version and olm-validate (operator-framework/api $api_version; cold: ~5 min on 2 idle cores, 17 min on busy ones)" \
  helm olm-validate -- \
  go build -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version -X helm.sh/helm/v4/internal/version.metadata=" \
  -o "$bin_dir/" helm.sh/helm/v4/cmd/helm ./olm-validate

echo "$bin_dir"
