#!/usr/bin/env bash
# Builds the container images the real test node runs (src/envtest/real-node/), on this machine: no Docker engine,
# no registry. Each image is an OCI archive in ${XDG_CACHE_HOME:-~/.cache}/sampledb-operator/images/<name>-<key>/,
# where <key> hashes what the image is built from (this script, its inputs), so it is rebuilt only when they change.
#
#   pause        the pod sandbox: scripts/images/pause.c, static, alone in its image
#   postgres-15  PostgreSQL 15 from Debian bookworm  } with scripts/images/postgres-entrypoint.sh: the official
#   postgres-17  PostgreSQL 17 from Debian trixie    } postgres image's contract (uid 999, POSTGRES_*, PGDATA)
#   postgres-15-rebuilt  the postgres-15 image with one more config label: the same files under another digest,
#                tagged localhost/postgres:15-rebuilt (a "new image of the same minor" for the minor-upgrade e2e test)
#   postgres-exporter  Debian bookworm's prometheus-postgres-exporter (0.11) and libc, alone: the SampleDB
#                exporter sidecar (spec.monitoring.exporter.image), run by the monitoring e2e test
#   operator     this checkout: lib/ (tsc, and the bundle lib/operator.js it runs), production node_modules and the Node 24 binary of the npm `node` package
#                on a minimal Debian bookworm root file system, laid out like the Dockerfile's runtime stage
#
#   scripts/build-images.sh [IMAGE...]          build what is missing (default: all), then print for each image
#                                               one line: <name> <archive> <reference>...
#   scripts/build-images.sh --print [IMAGE...]  the same lines, without building ("-" as archive when not built)
#
# Debian packages come from the default Debian mirror of mmdebstrap, or SAMPLEDB_DEBIAN_MIRROR. A PostgreSQL image is
# tagged with the version it really contains (e.g. localhost/postgres:15.14 and localhost/postgres:15). Builds of the
# same image from several checkouts at once are serialised by a lock; different images build in parallel.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
images_src="$repo_root/scripts/images"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/sampledb-operator"
images_dir="$cache_root/images"
all_images=(pause postgres-15 postgres-17 postgres-15-rebuilt postgres-exporter operator)
mirror=(${SAMPLEDB_DEBIAN_MIRROR:+"$SAMPLEDB_DEBIAN_MIRROR"})

say() { echo "build-images: $*" >&2; }

# Contents only: the same files in another checkout hash the same.
hash_files() { cat "$@" | sha256sum | cut -c1-16; }

# The suite each PostgreSQL major comes from.
suite_of() {
  case $1 in
    15) echo bookworm ;;
    17) echo trixie ;;
    *) return 1 ;;
  esac
}

# Everything under src/ but the test harness (src/envtest, which the operator never loads) and the files tsc and npm
# read: the operator image's sources.
operator_sources() {
  (cd "$repo_root" && find src -type f -name '*.ts' ! -path 'src/envtest/*' -print0 | sort -z | xargs -0 sha256sum &&
    sha256sum package.json package-lock.json tsconfig.json tsconfig.build.json scripts/bundle-operator.ts) | sha256sum | cut -c1-16
  # (relative names: the same sources in another checkout hash the same)
}

node_binary() { readlink -f "$repo_root/node_modules/.bin/node"; }

# The recipe of an image: the functions that build it (not the rest of this script, so editing one image's recipe
# does not rebuild the others) and the files they read.
recipe_of() {
  declare -f with_progress oci_image archive "$@" | sha256sum | cut -c1-16
}

key_of() {
  case $1 in
    pause) echo "$(recipe_of build_pause)-$(hash_files "$images_src/pause.c")" | sha256sum | cut -c1-16 ;;
    postgres-exporter) recipe_of build_exporter ;;
    postgres-15-rebuilt) echo "$(recipe_of build_postgres_rebuilt)-$(key_of postgres-15)" | sha256sum | cut -c1-16 ;;
    postgres-*) echo "$(recipe_of build_postgres suite_of)-$(hash_files "$images_src/postgres-entrypoint.sh")-$1" | sha256sum | cut -c1-16 ;;
    operator) echo "$(recipe_of build_operator operator_base)-$(operator_sources)-$(hash_files "$(node_binary)")" | sha256sum | cut -c1-16 ;;
    *) say "unknown image '$1' (known: ${all_images[*]})"; return 1 ;;
  esac
}

# with_progress LABEL COMMAND...: a line every 30 s, so a long build does not look like a hang.
with_progress() {
  local label=$1 started=$SECONDS
  shift
  say "$label ..."
  ( while sleep 30; do say "  still building $label ($((SECONDS - started))s)"; done ) &
  local ticker=$! status=0
  "$@" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [[ $status -ne 0 ]]; then
    say "$label FAILED"
    return "$status"
  fi
  say "$label done in $((SECONDS - started))s"
}

# oci_image WORK ROOTFS... -- CONFIG_ARGS...: an OCI layout in WORK/oci with one layer per "SOURCE:TARGET" rootfs.
oci_image() {
  local work=$1
  shift
  umoci init --layout "$work/oci"
  umoci new --image "$work/oci:image"
  while [[ $1 != -- ]]; do
    umoci insert --image "$work/oci:image" "${1%%:*}" "${1#*:}" >/dev/null
    shift
  done
  shift
  umoci config --image "$work/oci:image" --author sampledb-operator "$@"
}

# archive WORK OUT REFS...: WORK/oci as an OCI archive at OUT/image.tar named after the first reference.
archive() {
  local work=$1 out=$2
  shift 2
  skopeo copy --quiet "oci:$work/oci:image" "oci-archive:$out/image.tar:$1"
  printf '%s\n' "$@" > "$out/refs"
}

build_pause() {
  local work=$1 out=$2
  mkdir -p "$work/root"
  gcc -Os -static -s -o "$work/root/pause" "$images_src/pause.c"
  oci_image "$work" "$work/root/pause:/pause" -- \
    --config.entrypoint /pause --config.user 65535:65535
  archive "$work" "$out" localhost/pause:envtest
}

build_postgres() {
  local work=$1 out=$2 major=$3 suite version
  suite=$(suite_of "$major")
  local root="$work/rootfs"
  # uid/gid 999 before postgresql-common creates the user (it keeps an existing one); no cluster made by the package:
  # the entrypoint runs initdb in PGDATA. The LLVM JIT (optional, ~150 MB) is left out: jit then stays off.
  # shellcheck disable=SC2016 # "$1" is the hook's argument (the root file system), expanded by mmdebstrap's shell
  mmdebstrap --variant=minbase --include="postgresql-$major" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --essential-hook='echo "postgres:x:999:999:PostgreSQL administrator:/var/lib/postgresql:/bin/bash" >> "$1/etc/passwd"' \
    --essential-hook='echo "postgres:x:999:" >> "$1/etc/group"' \
    --essential-hook='mkdir -p "$1/etc/postgresql-common" && echo "create_main_cluster = false" > "$1/etc/postgresql-common/createcluster.conf"' \
    --customize-hook='rm -rf "$1"/usr/lib/postgresql/*/lib/llvmjit* "$1"/usr/lib/postgresql/*/lib/bitcode "$1"/usr/lib/x86_64-linux-gnu/libLLVM*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*.log "$1"/var/cache/debconf/*-old' \
    --customize-hook='mkdir -p "$1/run/postgresql" "$1/var/lib/postgresql/data" "$1/docker-entrypoint-initdb.d"' \
    --customize-hook='chown 999:999 "$1/run/postgresql" "$1/var/lib/postgresql" "$1/var/lib/postgresql/data"' \
    --customize-hook='chmod 3777 "$1/run/postgresql" && chmod 1777 "$1/var/lib/postgresql/data"' \
    --customize-hook="install -m 0755 '$images_src/postgres-entrypoint.sh' \"\$1/usr/local/bin/docker-entrypoint.sh\"" \
    "$suite" "$root" "${mirror[@]}" 2>&1 | sed -u 's/^/build-images:   /' >&2
  version=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Version}' "postgresql-$major")
  version=${version%%-*}
  [[ $version == "$major".* ]] || { say "postgresql-$major reports version '$version'"; return 1; }
  oci_image "$work" "$root:/" -- \
    --config.entrypoint docker-entrypoint.sh --config.cmd postgres \
    --config.env "PATH=/usr/lib/postgresql/$major/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --config.env LANG=C.UTF-8 --config.env "PG_MAJOR=$major" --config.env "PG_VERSION=$version" \
    --config.env PGDATA=/var/lib/postgresql/data --config.volume /var/lib/postgresql/data \
    --config.exposedports 5432/tcp --config.stopsignal SIGINT
  archive "$work" "$out" "localhost/postgres:$version" "localhost/postgres:$major"
  echo "$version" > "$out/version"
}

# postgres-15 with one more label: another manifest and config digest, the same layer. What a registry shows when an
# image is rebuilt without a new PostgreSQL release; the operator treats it as a minor change (a rolling restart).
build_postgres_rebuilt() {
  local work=$1 out=$2 base
  # The result line of postgres-15 (built first if missing, under its own lock): "<name> <archive> <refs...>".
  base=$(ensure postgres-15 true | cut -d' ' -f2)
  [[ -f $base ]] || { say "postgres-15 is not built"; return 1; }
  skopeo copy --quiet "oci-archive:$base" "oci:$work/oci:image"
  umoci config --image "$work/oci:image" --config.label io.sampledb.test.rebuilt=true
  archive "$work" "$out" localhost/postgres:15-rebuilt
}

# The exporter sidecar: the Debian package's binary and the libc it links, unpacked without running package scripts;
# no shell, no users (it runs as the pod's uid 999). Tagged with the version it really contains.
build_exporter() {
  local work=$1 out=$2 version
  local root="$work/rootfs"
  mmdebstrap --variant=extract --include=libc6,prometheus-postgres-exporter \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm "$root" "${mirror[@]}" 2>&1 | sed -u 's/^/build-images:   /' >&2
  # The extract variant records no dpkg status: the binary says its version (it runs here, same libc).
  version=$("$root/usr/bin/prometheus-postgres-exporter" --version 2>&1 | sed -n 's/^postgres_exporter, version \([0-9.]*\).*/\1/p')
  [[ -n $version ]] || { say "prometheus-postgres-exporter reports no version"; return 1; }
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/lib/dpkg "$root"/var/log/*
  mkdir -p "$root/tmp" && chmod 1777 "$root/tmp"
  oci_image "$work" "$root:/" -- \
    --config.entrypoint /usr/bin/prometheus-postgres-exporter \
    --config.env PATH=/usr/sbin:/usr/bin:/sbin:/bin --config.user 65534:65534 --config.exposedports 9187/tcp
  archive "$work" "$out" "localhost/postgres-exporter:$version" localhost/postgres-exporter:envtest
  echo "$version" > "$out/version"
}

# The Dockerfile's runtime stage: distroless nodejs24-debian12 (glibc, libstdc++, tzdata, a nonroot user), /app with
# lib/, production node_modules and package.json, `node lib/operator.js` as uid 65532.
# The operator's base root file system: distroless nodejs24-debian12's content (glibc, libstdc++, tzdata, a nonroot
# user), unpacked from Debian packages without running their scripts.
operator_base() {
  local base=$1
  mmdebstrap --variant=extract --include=base-files,netbase,tzdata,libc6,libstdc++6,libgcc-s1 \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm "$base" "${mirror[@]}" 2>&1 | sed -u 's/^/build-images:   /' >&2
  rm -rf "$base"/var/lib/apt/lists/* "$base"/var/cache/apt/* "$base"/var/lib/dpkg "$base"/var/log/*
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$base/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$base/etc/group"
  mkdir -p "$base/tmp" "$base/home/nonroot" "$base/root"
  chmod 1777 "$base/tmp"
  chown 65532:65532 "$base/home/nonroot" && chmod 0700 "$base/home/nonroot" "$base/root"
}

# The Dockerfile's runtime stage: the base above, /app with lib/, production node_modules and package.json,
# `node lib/operator.js` (the bundle of lib/main.js, ADR 0011) as uid 65532. The base and node_modules change rarely
# and are kept between builds; lib/ is compiled and bundled from this checkout, or taken from SAMPLEDB_OPERATOR_LIB
# when the caller has just built it from the same sources (scripts/test.sh does).
build_operator() {
  local work=$1 out=$2 version
  local base="$work/base" app="$work/app/app" runtime="$work/nodejs/nodejs"
  local base_cache
  base_cache="$images_dir/.operator-base-$(recipe_of operator_base)"
  if [[ ! -d $base_cache ]]; then
    operator_base "$base_cache.new"
    find "$images_dir" -maxdepth 1 -name '.operator-base-*' ! -name "${base_cache##*/}.new" -exec rm -rf --one-file-system {} +
    mv "$base_cache.new" "$base_cache"
  fi
  cp -a "$base_cache" "$base"

  mkdir -p "$runtime/bin" "$app"
  install -m 0755 "$(node_binary)" "$runtime/bin/node"
  # Before the bundle: it reads package.json beside lib/ (the version, and "type": "module").
  cp "$repo_root/package.json" "$app/"
  if [[ -n ${SAMPLEDB_OPERATOR_LIB:-} ]]; then
    cp -a "$SAMPLEDB_OPERATOR_LIB" "$app/lib"
  else
    # tsc reports on stdout, which is this script's result (one line per image): its messages go to stderr.
    (cd "$repo_root" && ./node_modules/.bin/tsc -p tsconfig.build.json --outDir "$app/lib" >&2 &&
      "$(node_binary)" scripts/bundle-operator.ts "$app/lib" >&2)
  fi
  [[ -f $app/lib/operator.js ]] || { echo "build-images: $app/lib/operator.js missing (npm run build bundles it)" >&2; return 1; }
  # Production node_modules depend on the lock file only: kept between builds of the image.
  local deps
  deps="$images_dir/.operator-deps-$(hash_files "$repo_root/package-lock.json")"
  if [[ ! -d $deps/node_modules ]]; then
    rm -rf "$deps" && mkdir -p "$deps.new"
    cp "$repo_root/package.json" "$repo_root/package-lock.json" "$deps.new/"
    (cd "$deps.new" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error >&2)
    find "$images_dir" -maxdepth 1 -name '.operator-deps-*' ! -name "${deps##*/}.new" -exec rm -rf {} +
    mv "$deps.new" "$deps"
  fi
  cp -a "$deps/node_modules" "$app/"
  chmod -R a+rX,go-w "$app" "$runtime"
  version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$repo_root/package.json")
  oci_image "$work" "$base:/" "$runtime:/nodejs" "$app:/app" -- \
    --config.entrypoint /nodejs/bin/node --config.cmd=--max-semi-space-size=1 --config.cmd=--optimize-for-size \
    --config.cmd lib/operator.js --config.workingdir /app \
    --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --config.env NODE_ENV=production \
    --config.user 65532:65532 --config.exposedports 8080/tcp --config.exposedports 8081/tcp
  archive "$work" "$out" "localhost/sampledb-operator:$version"
}

# Removes a work dir. An interrupted mmdebstrap can leave /proc, /sys and /dev/* mounted inside its root: unmount
# those first (deepest first) and never cross into a mount while removing.
remove_work() {
  local work=$1 mounts
  mounts=$(awk -v w="$work/" 'index($5, w) == 1 { print length($5) " " $5 }' /proc/self/mountinfo | sort -rn | cut -d' ' -f2-)
  for m in $mounts; do umount -l "$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$work"
}

build_one() {
  local name=$1 out=$2 work status=0
  work=$(mktemp -d "$images_dir/.work-$name.XXXXXX")
  # shellcheck disable=SC2064 # expand now: $work is local
  trap "remove_work '$work'" EXIT INT TERM
  case $name in
    pause) with_progress "pause image" build_pause "$work" "$out.new" || status=$? ;;
    postgres-exporter) with_progress "postgres_exporter image (bookworm; cold: ~1 min)" build_exporter "$work" "$out.new" || status=$? ;;
    postgres-15-rebuilt) with_progress "PostgreSQL 15 image, rebuilt (a label more)" build_postgres_rebuilt "$work" "$out.new" || status=$? ;;
    postgres-*) with_progress "PostgreSQL ${name#postgres-} image ($(suite_of "${name#postgres-}"); cold: ~1.5 min)" \
      build_postgres "$work" "$out.new" "${name#postgres-}" || status=$? ;;
    operator) with_progress "operator image (cold: ~1 min)" build_operator "$work" "$out.new" || status=$? ;;
  esac
  remove_work "$work"
  trap - EXIT INT TERM
  if [[ $status -ne 0 ]]; then
    rm -rf "$out.new"
    return "$status"
  fi
  mv "$out.new" "$out"
  # Older builds of the same image are not needed any more (keys have no dash: postgres-15's older builds are
  # postgres-15-<key>, never postgres-15-rebuilt-<key>).
  find "$images_dir" -maxdepth 1 -type d -name "$name-*" ! -name "$name-*-*" ! -path "$out" -exec rm -rf {} +
}

# Prints "<name> <archive> <refs...>" once the image exists (building it under a lock unless --print).
ensure() {
  local name=$1 build=$2 key out
  key=$(key_of "$name")
  out="$images_dir/$name-$key"
  if [[ ! -f $out/image.tar && $build == true ]]; then
    mkdir -p "$images_dir"
    exec {lock}>"$images_dir/.$name.lock"
    flock "$lock"
    if [[ ! -f $out/image.tar ]]; then
      rm -rf "$out.new"
      mkdir -p "$out.new"
      build_one "$name" "$out"
    fi
    exec {lock}>&-
  fi
  if [[ -f $out/image.tar ]]; then
    echo "$name $out/image.tar $(tr '\n' ' ' < "$out/refs" | sed 's/ $//')"
  else
    echo "$name -"
  fi
}

build=true
if [[ ${1:-} == --print ]]; then
  build=false
  shift
fi
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=("${all_images[@]}")
for name in "${names[@]}"; do key_of "$name" >/dev/null; done
if [[ $build == true ]]; then
  for tool in mmdebstrap umoci skopeo gcc; do
    command -v "$tool" >/dev/null || { say "$tool is missing: run scripts/install-system-deps.sh"; exit 1; }
  done
  # Independent images build in parallel (mostly downloads and unpacking, which overlap well); progress goes to
  # stderr as it happens, the result lines to stdout in the order asked.
  mkdir -p "$images_dir"
  results=$(mktemp -d)
  trap 'rm -rf "$results"' EXIT
  pids=()
  for name in "${names[@]}"; do
    ensure "$name" true > "$results/$name" &
    pids+=($!)
  done
  status=0
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  for name in "${names[@]}"; do cat "$results/$name"; done
  exit "$status"
fi
for name in "${names[@]}"; do ensure "$name" false; done
