#!/usr/bin/env bash
# `make engine-images`: builds the images that engines run from on a real node, without a
# container daemon (mmdebstrap + podman with runc), as OCI archives in the per-machine cache:
#   $AIEM_CACHE/engine-images/h2o-engine-<H2O version>-<key>.oci.tar         H2O-3 on OpenJDK 17
#   $AIEM_CACHE/engine-images/notebook-engine-<JupyterLab version>-<key>.oci.tar  JupyterLab
#   $AIEM_CACHE/engine-images/sandbox-engine-bookworm-<key>.oci.tar         sh, coreutils, python3
# <key> hashes everything that goes into an image: this script, the files of the image's folder
# beside it (packages, pinned PyPI requirements with their hashes, scripts, image settings) and the
# Debian package lists it installs from. An archive that exists is never rebuilt, so a warm run
# only hashes a few files. Arguments name the images to build (h2o, notebook, sandbox; all by
# default). Prints KEY=value lines (read by test/cluster/engine-images.ts):
#   H2O_IMAGE_REF=localhost/ai-engine-manager/h2o-engine:3.46.0.12
#   H2O_IMAGE_ARCHIVE=/…/h2o-engine-3.46.0.12-<key>.oci.tar
# and the same for NOTEBOOK_ and SANDBOX_.
#
# The Debian package lists are this cache's own (engine-images/apt/), fetched when missing, when
# a package they name has left the mirror, or when AIEM_ENGINE_IMAGES_REFRESH=1 asks for today's
# packages (security updates): every image then gets a new key.
#
# Loading an archive into a node's containerd: `ctr -n k8s.io images import <archive>` (no
# --base-name needed). The archive is `podman save --format oci-archive`: its index.json names
# the one manifest with `org.opencontainers.image.ref.name` = the full ref
# (localhost/ai-engine-manager/h2o-engine:3.46.0.12) and no `io.containerd.image.name`, and
# containerd keeps a ref.name that is a full reference as the image's name (it prefixes only a
# bare tag, with --base-name or with "import-<date>"). `--base-name localhost/ai-engine-manager/
# h2o-engine` works too (containerd then checks that the name starts with it). Pods use the ref
# with `imagePullPolicy: Never`; `podman load -i <archive>` gives the same name.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${AIEM_CACHE:-$HOME/.cache/ai-engine-manager}/engine-images
apt_dir=$out/apt
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(h2o notebook sandbox)

log() { printf '[engine-images] %s\n' "$*" >&2; }

# bookworm with its point-release and security updates.
sources() {
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  echo "deb [signed-by=$keyring] http://deb.debian.org/debian bookworm main"
  echo "deb [signed-by=$keyring] http://deb.debian.org/debian bookworm-updates main"
  echo "deb [signed-by=$keyring] http://deb.debian.org/debian-security bookworm-security main"
}

refresh_lists() {
  log "fetching Debian's package lists"
  rm -rf "$apt_dir" && mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache"
  sources >"$apt_dir/sources.new"
  # The host's own sources stay out: only these suites.
  apt-get -qq \
    -o Dir::Etc::SourceList="$apt_dir/sources.new" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" \
    -o APT::Sandbox::User=root -o Acquire::Languages=none update
  # Only complete lists count (the warm path looks for sources.list).
  mv "$apt_dir/sources.new" "$apt_dir/sources.list"
}

tag_of() {
  case $1 in
    h2o) sed -n 's/^h2o==\([^ ]*\).*/\1/p' "$here/h2o/requirements.txt" ;;
    notebook) sed -n 's/^jupyterlab==\([^ ]*\).*/\1/p' "$here/notebook/requirements.txt" ;;
    sandbox) echo bookworm ;;
    *) log "unknown image $1 (h2o, notebook or sandbox)"; return 1 ;;
  esac
}

key_of() {
  {
    cat "$here/build.sh" "$here/finish-root.sh"
    find "$here/$1" -type f | LC_ALL=C sort | while read -r file; do echo "${file#"$here"}"; cat "$file"; done
    cat "$apt_dir"/lists/*_InRelease
  } | sha256sum | cut -c1-16
}

archive_of() { echo "$out/$1-engine-$(tag_of "$1")-$(key_of "$1").oci.tar"; }
ref_of() { echo "localhost/ai-engine-manager/$1-engine:$(tag_of "$1")"; }

report() {
  local kind upper
  for kind in "${kinds[@]}"; do
    upper=$(tr '[:lower:]' '[:upper:]' <<<"$kind")
    echo "${upper}_IMAGE_REF=$(ref_of "$kind")"
    echo "${upper}_IMAGE_ARCHIVE=$(archive_of "$kind")"
  done
}

missing() {
  local kind
  for kind in "${kinds[@]}"; do [ -f "$(archive_of "$kind")" ] || return 0; done
  return 1
}

# The warm path: every archive there, nothing locked, nothing run but hashing.
if [ -f "$apt_dir/sources.list" ] && [ "${AIEM_ENGINE_IMAGES_REFRESH:-0}" != 1 ] && ! missing; then
  report
  exit 0
fi

mkdir -p "$out"
# One build at a time per machine: a second run waits, then finds the archives the first wrote.
exec 9>"$out/.lock"
flock 9
if [ ! -f "$apt_dir/sources.list" ] || [ "${AIEM_ENGINE_IMAGES_REFRESH:-0}" = 1 ]; then refresh_lists; fi

work=$(mktemp -d "$out/work.XXXXXX")
# podman wants a short run root (at most 50 characters).
run=$(mktemp -d /tmp/aiem-engine-images.XXXXXX)
trap 'rm -rf "$work" "$run"' EXIT

pip_tool() {
  local venv=$out/pip
  if [ ! -x "$venv/bin/pip" ]; then
    rm -rf "$venv" && python3 -m venv "$venv" >&2
  fi
  "$venv/bin/pip" --disable-pip-version-check "$@" >&2
}

# What each image takes from PyPI, downloaded on this machine (the root being built has no
# network of its own to rely on) into $work/inputs, kept in the cache across builds.
prepare_h2o() {
  local version jar
  version=$(tag_of h2o)
  jar=$out/downloads/h2o-$version.jar
  if [ ! -f "$jar" ]; then
    log "downloading H2O-3 $version (the PyPI source distribution that carries h2o.jar)"
    mkdir -p "$work/sdist" "$out/downloads"
    pip_tool download --quiet --no-deps --no-binary :all: --require-hashes \
      -r "$here/h2o/requirements.txt" -d "$work/sdist"
    tar -xzOf "$work/sdist/h2o-$version.tar.gz" "h2o-$version/h2o/backend/bin/h2o.jar" >"$jar.tmp"
    mv "$jar.tmp" "$jar"
    rm -rf "$work/sdist"
  fi
  ln "$jar" "$work/inputs/h2o.jar"
}

prepare_notebook() {
  local wheels=$out/downloads/notebook-wheels
  mkdir -p "$wheels"
  # Wheels only, for the image's Python (CPython 3.11, glibc 2.36), each checked against its
  # hash. pip takes a foreign platform literally: every glibc the image satisfies is named.
  local tags=(--implementation cp --python-version 3.11 --abi cp311 --abi abi3 --abi none) glibc
  for glibc in $(seq 36 -1 5); do tags+=(--platform "manylinux_2_${glibc}_x86_64"); done
  pip_tool download --quiet --no-deps --only-binary :all: --require-hashes "${tags[@]}" \
    -r "$here/notebook/requirements.txt" -d "$wheels"
  cp -r "$wheels" "$work/inputs/wheels"
}

prepare_sandbox() { :; }

# The root file system as a tar: Debian's essential set (dpkg runs the packages' maintainer
# scripts, so alternatives, CA stores and byte code are in place) plus the image's packages, from
# the lists of $apt_dir exactly (no update of its own), without documentation. mmdebstrap's
# merged-usr hooks lay out the merged /usr themselves and answer init-system-helpers'
# "usrmerge | usr-is-merged" with usr-is-merged, which apt would otherwise meet with usrmerge
# and the whole of Perl (~50 MB).
build_root() {
  local kind=$1
  mkdir -p "$apt_dir/debs"
  # dpkg's fsync after every file costs most of the time on virtual disks, and a half-written
  # root is thrown away anyway. The downloaded packages are kept for the next build
  # (sync-in/sync-out, mmdebstrap's own recipe); they go with the lists they came from. OpenJDK's
  # alternatives need the man folder that path-exclude leaves out (finish-root.sh removes it).
  mmdebstrap --mode=root --variant=essential --skip=update --skip=essential/unlink \
    --dpkgopt=force-unsafe-io \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --include="$(grep -v '^#' "$here/$kind/packages" | paste -sd,)" \
    --setup-hook="mkdir -p \"\$1/var/lib/apt/lists\" && find '$apt_dir/lists' -maxdepth 1 -type f ! -name lock -exec cp -t \"\$1/var/lib/apt/lists/\" {} +" \
    --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
    --setup-hook="sync-in '$apt_dir/debs' /var/cache/apt/archives/" \
    --essential-hook='mkdir -p "$1/usr/share/man/man1"' \
    --customize-hook="sync-out /var/cache/apt/archives '$apt_dir/debs'" \
    --customize-hook="'$here/$kind/customize.sh' \"\$1\" '$work/inputs'" \
    bookworm "$work/root.tar" "$apt_dir/sources.list" >"$work/mmdebstrap.log" 2>&1
}

# The image from the root: one layer, its settings from <kind>/image.conf, saved as an OCI archive
# under its final name. podman's storage is this build's own and goes with it.
build_image() {
  local kind=$1 archive=$2 ref
  ref=$(ref_of "$kind")
  local podman=(podman --runtime runc --root "$work/storage" --runroot "$run" --storage-driver vfs)
  local changes=(--change "LABEL org.opencontainers.image.title=$kind-engine"
    --change "LABEL org.opencontainers.image.version=$(tag_of "$kind")")
  local line
  while IFS= read -r line; do
    case $line in '' | '#'*) ;; *) changes+=(--change "$line") ;; esac
  done <"$here/$kind/image.conf"
  "${podman[@]}" import --quiet "${changes[@]}" "$work/root.tar" "$ref" >/dev/null
  "${podman[@]}" save --quiet --format oci-archive --output "$work/image.oci.tar" "$ref"
  # A reader never sees a partial archive: it appears whole, under its final name.
  mv "$work/image.oci.tar" "$archive"
  "${podman[@]}" rmi --all --force >/dev/null
  rm -rf "$work/storage" "$work/root.tar"
}

build() {
  local kind=$1 archive start=$SECONDS
  archive=$(archive_of "$kind")
  [ -f "$archive" ] && return 0
  log "building $(ref_of "$kind")"
  rm -rf "$work/inputs" && mkdir -p "$work/inputs"
  "prepare_$kind"
  log "inputs ready after $((SECONDS - start)) s"
  if ! build_root "$kind"; then
    # A package of the lists has left the mirror (a newer one replaced it): today's lists, a
    # new key.
    if ! grep -q 'Failed to fetch' "$work/mmdebstrap.log"; then cat "$work/mmdebstrap.log" >&2; return 1; fi
    log "retrying with fresh package lists"
    refresh_lists
    archive=$(archive_of "$kind")
    [ -f "$archive" ] && return 0
    build_root "$kind" || { cat "$work/mmdebstrap.log" >&2; return 1; }
  fi
  log "root file system ready after $((SECONDS - start)) s"
  build_image "$kind" "$archive"
  # Archives of earlier keys are never used again.
  find "$out" -maxdepth 1 -name "$kind-engine-*.oci.tar" ! -path "$archive" -delete
  log "built $(ref_of "$kind") in $((SECONDS - start)) s: $(($(stat -c %s "$archive") / 1000000)) MB archive"
}

for kind in "${kinds[@]}"; do build "$kind"; done
report
