#!/usr/bin/env bash
# Builds what the Pulumi end-to-end test (test/integration/deploy/pulumi.test.ts) runs: the pulumi CLI and the
# Kubernetes resource provider (pulumi-resource-kubernetes), from the Go modules in test/controlplane/pulumi/.
# Output goes to a cache outside the repo and is reused when present.
#
#   scripts/build-pulumi.sh          build what is missing, print the bin directory on the last line
#   scripts/build-pulumi.sh --print  print the bin directory only (no build)
#
# The Node.js language host (pulumi-language-nodejs) is not built: its module is not served by the Go module proxy
# here. The test drives the stack through the Automation API's inline program, which needs no language host (see
# docs/adr/0004-pulumi.md). Users run the official pulumi release, which bundles it.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
modules="$repo_root/test/controlplane/pulumi"
provider_module=github.com/pulumi/pulumi-kubernetes/provider/v4
cli_version=$(awk '$1 == "github.com/pulumi/pulumi/pkg/v3" { print $2 }' "$modules/cli/go.mod" | head -n1)
provider_version=$(awk -v m="$provider_module" '$1 == m { print $2 }' "$modules/kubernetes/go.mod" | head -n1)
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/sampledb-operator"
bin_dir="$cache_root/pulumi-$cli_version/bin"
log_prefix=build-pulumi
# shellcheck source=scripts/lib/go-build.sh
source "$repo_root/scripts/lib/go-build.sh"

if [[ "${1:-}" == "--print" ]]; then
  echo "$bin_dir"
  exit 0
fi

go_build_env

if fresh cli pulumi; then
  echo "build-pulumi: pulumi $cli_version is cached"
else
  # Same -X flag as pulumi's own Makefile, so `pulumi version` reports the release.
  (cd "$modules/cli" && with_progress "pulumi $cli_version (cold: ~13 min on 2 cores)" \
    go build -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$cli_version" \
      -o "$bin_dir/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)
  mark cli
fi

# The provider's main embeds schema-embed.json and terraform-mapping-embed.json, which its `go generate` step
# (generate.go) writes from the schema.json and terraform-mapping.json that the module does ship. The module cache
# is read-only, so: copy the module source, run its generate step there, and build that copy in place of the
# module (a replace in a scratch copy of our go.mod; our go.mod and go.sum still pin every other dependency).
build_provider() {
  # Runs under `with_progress ... || status=$?`, where set -e does not apply: every step returns on failure.
  local work src
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: $work is local
  trap "rm -rf '$work'" RETURN
  src=$(cd "$modules/kubernetes" && go mod download -json "$provider_module" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || return 1
  if [[ -z "$src" || ! -f "$src/cmd/pulumi-resource-kubernetes/generate.go" ]]; then
    echo "build-pulumi: cannot find the source of $provider_module@$provider_version" >&2
    return 1
  fi
  cp -R "$src" "$work/provider" && chmod -R u+w "$work/provider" || return 1
  (cd "$modules/kubernetes" && go build -o "$work/generate" "$work/provider/cmd/pulumi-resource-kubernetes/generate.go") ||
    return 1
  (cd "$work/provider/cmd/pulumi-resource-kubernetes" && VERSION="${provider_version#v}" "$work/generate") || return 1
  cp "$modules/kubernetes/go.mod" "$modules/kubernetes/go.sum" "$work/" || return 1
  go mod edit -replace "$provider_module=$work/provider" "$work/go.mod" || return 1
  (cd "$modules/kubernetes" && go build -modfile="$work/go.mod" \
    -ldflags "-s -w -X $provider_module/pkg/version.Version=${provider_version#v}" \
    -o "$bin_dir/pulumi-resource-kubernetes" "$provider_module/cmd/pulumi-resource-kubernetes")
}

if fresh kubernetes pulumi-resource-kubernetes; then
  echo "build-pulumi: pulumi-resource-kubernetes $provider_version is cached"
else
  with_progress "pulumi-resource-kubernetes $provider_version (generate step + build; cold: ~20 min on 2 cores)" \
    build_provider
  mark kubernetes
fi

echo "$bin_dir"
