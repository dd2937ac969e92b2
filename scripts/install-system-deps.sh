#!/usr/bin/env bash
# Installs the Debian packages the tests use, only when missing (idempotent, quiet when nothing to do).
#   postgresql (data-path tests), shellcheck (lint), openssl (test PKI), prometheus (promtool for the alert tests,
#   and the server that scrapes the operator and postgres_exporter in the monitoring test), prometheus-postgres-exporter
#   (the exporter that test runs against a local PostgreSQL); for the real node (e2e tier, --node real):
#   containerd, runc, the CNI plugins, iptables, conntrack, socat (kubectl port-forward), xfsprogs (volumes that
#   grow online), and mmdebstrap, umoci, skopeo, gcc to build its images (scripts/build-images.sh)
set -euo pipefail

packages=(postgresql shellcheck openssl ca-certificates prometheus prometheus-postgres-exporter
  containerd runc containernetworking-plugins iptables conntrack socat xfsprogs util-linux mmdebstrap umoci skopeo gcc libc6-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "system deps: ${packages[*]} already installed"
else
  echo "system deps: installing ${missing[*]}"
  sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

command -v go >/dev/null || { echo "system deps: Go 1.26+ is required to build the control plane (https://go.dev/dl)" >&2; exit 1; }
echo "system deps: $(go version)"
