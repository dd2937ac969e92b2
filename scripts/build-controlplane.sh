#!/usr/bin/env bash
# Builds the real control-plane binaries used by the integration tests and `npm run cluster`:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (k8s.io/kubernetes), etcd and kwok,
# from the Go modules in test/controlplane/. Output goes to a cache outside the repo and is reused when present.
#
#   scripts/build-controlplane.sh          build what is missing, print the bin directory on the last line
#   scripts/build-controlplane.sh --print  print the bin directory only (no build)
#
# Users who already have setup-envtest binaries can skip the build with KUBEBUILDER_ASSETS (see docs/testing.md).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
modules="$repo_root/test/controlplane"
k8s_version=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 } $1 == "k8s.io/kubernetes" { print $2 }' "$modules/k8s/go.mod" | head -n1)
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2 } $1 == "require" && $2 == "go.etcd.io/etcd/server/v3" { print $3 }' "$modules/etcd/go.mod" | head -n1)
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/sampledb-operator"
bin_dir="$cache_root/k8s-$k8s_version/bin"

# The stamp ties the binaries to the exact module files that built them: edit a go.mod and they are rebuilt.
stamp_of() { cat "$modules/$1/go.mod" "$modules/$1/go.sum" | sha256sum | cut -c1-16; }

if [[ "${1:-}" == "--print" ]]; then
  echo "$bin_dir"
  exit 0
fi

command -v go >/dev/null || { echo "build-controlplane: Go is required (go 1.26+)" >&2; exit 1; }
mkdir -p "$bin_dir"
export GOFLAGS="${GOFLAGS:--buildvcs=false} -trimpath"
export CGO_ENABLED=0

# Prints a line every 30 s while a long build runs, so CI logs show it is alive.
with_progress() {
  local label=$1 started=$SECONDS
  shift
  echo "build-controlplane: $label ..."
  ( while sleep 30; do echo "build-controlplane:   still building $label ($((SECONDS - started))s)"; done ) &
  local ticker=$!
  local status=0
  "$@" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [[ $status -ne 0 ]]; then
    echo "build-controlplane: $label FAILED" >&2
    return $status
  fi
  echo "build-controlplane: $label done in $((SECONDS - started))s"
}

# fresh NAME BINARIES... : true when every binary exists and was built from the current module files.
fresh() {
  local module=$1 stamp
  shift
  stamp=$(stamp_of "$module")
  [[ -f "$bin_dir/.$module.stamp" && "$(cat "$bin_dir/.$module.stamp")" == "$stamp" ]] || return 1
  for b in "$@"; do [[ -x "$bin_dir/$b" ]] || return 1; done
}
mark() { stamp_of "$1" > "$bin_dir/.$1.stamp"; }

minor=${k8s_version#v1.}
minor=${minor%%.*}
# Same -X flags as kubernetes' hack/lib/version.sh, so /version reports the real release.
# The date is fixed so repeated builds are byte-identical.
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  k8s_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

if fresh k8s kube-apiserver kube-controller-manager kube-scheduler kubectl; then
  echo "build-controlplane: kubernetes $k8s_version binaries are cached"
else
  (cd "$modules/k8s" && with_progress "kubernetes $k8s_version (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl; cold: ~15-25 min on 2 cores)" \
    go build -ldflags "$k8s_ldflags" -o "$bin_dir/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
  mark k8s
fi

if fresh etcd etcd; then
  echo "build-controlplane: etcd $etcd_version is cached"
else
  (cd "$modules/etcd" && with_progress "etcd $etcd_version" \
    go build -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=${etcd_version}" -o "$bin_dir/etcd" go.etcd.io/etcd/server/v3)
  mark etcd
fi

if fresh kwok kwok; then
  echo "build-controlplane: kwok is cached"
else
  (cd "$modules/kwok" && with_progress "kwok" go build -ldflags "-s -w" -o "$bin_dir/kwok" sigs.k8s.io/kwok/cmd/kwok)
  mark kwok
fi

echo "$bin_dir"
