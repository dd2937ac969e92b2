#!/usr/bin/env bash
# Builds the real control-plane binaries used by the integration tests and `npm run cluster`:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (k8s.io/kubernetes), etcd and kwok, and for the
# real node (`--node real`, the e2e tier) kubelet, kube-proxy (k8s.io/kubernetes), CoreDNS and the NetworkPolicy
# agent (kube-network-policies' dataplane), from the Go modules in test/controlplane/. Output goes to a cache outside the repo and is reused when present.
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
log_prefix=build-controlplane
# shellcheck source=scripts/lib/go-build.sh
source "$repo_root/scripts/lib/go-build.sh"

if [[ "${1:-}" == "--print" ]]; then
  echo "$bin_dir"
  exit 0
fi

go_build_env

minor=${k8s_version#v1.}
minor=${minor%%.*}
# Same -X flags as kubernetes' hack/lib/version.sh, so /version reports the real release.
# The date is fixed so repeated builds are byte-identical.
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  k8s_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

if fresh k8s kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy; then
  echo "build-controlplane: kubernetes $k8s_version binaries are cached"
else
  (cd "$modules/k8s" && with_progress "kubernetes $k8s_version (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet, kube-proxy; cold: ~17-25 min on 2 cores)" \
    go build -ldflags "$k8s_ldflags" -o "$bin_dir/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl \
      k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
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

coredns_version=$(awk '$1 == "require" && $2 == "github.com/coredns/coredns" { print $3 } $1 == "github.com/coredns/coredns" { print $2 }' "$modules/coredns/go.mod" | head -n1)
build_module coredns "coredns $coredns_version" coredns -- go build -ldflags "-s -w" -o "$bin_dir/coredns" .

netpol_version=$(awk '$1 == "require" && $2 == "sigs.k8s.io/kube-network-policies" { print $3 } $1 == "sigs.k8s.io/kube-network-policies" { print $2 }' "$modules/netpol/go.mod" | head -n1)
build_module netpol "netpol (kube-network-policies $netpol_version)" netpol -- go build -ldflags "-s -w" -o "$bin_dir/netpol" .

echo "$bin_dir"
