# Shared by scripts/build-controlplane.sh and scripts/build-pulumi.sh (sourced, not run).
# The caller sets: log_prefix (e.g. "build-pulumi"), modules (dir of Go modules, one per subdir), bin_dir (output).
# shellcheck shell=bash disable=SC2154

# A hash of a module's go.mod + go.sum (and its own .go files, e.g. CoreDNS's plugin list): edit any and the binaries
# built from it are rebuilt. A module without .go files hashes as it always did.
stamp_of() {
  local sources=()
  shopt -s nullglob
  sources=("$modules/$1"/*.go)
  shopt -u nullglob
  cat "$modules/$1/go.mod" "$modules/$1/go.sum" "${sources[@]}" | sha256sum | cut -c1-16
}

# fresh MODULE BINARIES... : true when every binary exists and was built from the current module files.
fresh() {
  local module=$1 stamp
  shift
  stamp=$(stamp_of "$module")
  [[ -f "$bin_dir/.$module.stamp" && "$(cat "$bin_dir/.$module.stamp")" == "$stamp" ]] || return 1
  for b in "$@"; do [[ -x "$bin_dir/$b" ]] || return 1; done
}

# mark MODULE: records that the binaries of MODULE were built from its current files.
mark() { stamp_of "$1" > "$bin_dir/.$1.stamp"; }

# with_progress LABEL COMMAND...: runs COMMAND, printing a line every 30 s so CI logs show a long build is alive.
with_progress() {
  local label=$1 started=$SECONDS
  shift
  echo "$log_prefix: $label ..."
  ( while sleep 30; do echo "$log_prefix:   still building $label ($((SECONDS - started))s)"; done ) &
  local ticker=$!
  local status=0
  "$@" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [[ $status -ne 0 ]]; then
    echo "$log_prefix: $label FAILED" >&2
    return $status
  fi
  echo "$log_prefix: $label done in $((SECONDS - started))s"
}

# Go settings for reproducible, static builds of tools.
go_build_env() {
  command -v go >/dev/null || { echo "$log_prefix: Go is required (go 1.26+)" >&2; exit 1; }
  mkdir -p "$bin_dir"
  export GOFLAGS="${GOFLAGS:--buildvcs=false} -trimpath"
  export CGO_ENABLED=0
}
