#!/usr/bin/env bash
# The real node's own images, built daemonless (podman with runc) once per machine into the cache
# as OCI archives, keyed by what goes into them:
#   pause   the pod sandbox: the statically linked pause program alone
#   helper  local-path-provisioner's helper pod: busybox (Debian's static build), which makes and
#           removes volume folders with sh, mkdir and rm
# Usage: build-node-images.sh PAUSE_DIR PAUSE_VERSION. Prints KEY=value lines.
set -euo pipefail
pause_dir=$1 pause_version=$2
CACHE=${AIEM_CACHE:-$HOME/.cache/ai-engine-manager}
out=$CACHE/node-images
mkdir -p "$out"
podman=(podman --runtime runc --root "$CACHE/podman-node-images/root" --runroot /run/ai-engine-manager-podman-node-images
        --storage-driver vfs)

log() { printf '[build-node-images] %s\n' "$*" >&2; }

# build NAME REF ARCHIVE ROOTFS ENTRYPOINT_JSON: a one-layer image of ROOTFS, saved as ARCHIVE.
build() {
  local name=$1 ref=$2 archive=$3 rootfs=$4 entrypoint=$5
  [ -f "$archive" ] && return
  log "building the $name image $ref"
  local tar
  tar="$work/$name.tar"
  # Fixed owners and times: the same inputs give the same layer.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$tar" .
  "${podman[@]}" import --quiet --change "ENTRYPOINT $entrypoint" "$tar" "$ref" >/dev/null
  "${podman[@]}" save --quiet --format oci-archive -o "$archive.tmp" "$ref"
  "${podman[@]}" rmi --force "$ref" >/dev/null 2>&1 || true
  mv "$archive.tmp" "$archive"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

pause_ref="localhost/ai-engine-manager/pause:$pause_version"
pause_hash=$(sha256sum "$pause_dir/pause" | cut -c1-12)
pause_archive="$out/pause-$pause_version-$pause_hash.oci.tar"
if [ ! -f "$pause_archive" ]; then
  mkdir -p "$work/pause"
  cp "$pause_dir/pause" "$work/pause/pause"
  build pause "$pause_ref" "$pause_archive" "$work/pause" '["/pause"]'
fi

# busybox-static from the machine's Debian release, its version (without the epoch) in the tag.
candidate() { apt-cache policy busybox-static 2>/dev/null | sed -n 's/^ *Candidate: \([0-9]*:\)\{0,1\}//p' | tr '+~' '--'; }
busybox_version=$(candidate)
[ -n "$busybox_version" ] && [ "$busybox_version" != "(none)" ] || { apt-get update -qq && busybox_version=$(candidate); }
helper_ref="localhost/ai-engine-manager/volume-helper:$busybox_version"
helper_archive="$out/volume-helper-$busybox_version.oci.tar"
if [ ! -f "$helper_archive" ]; then
  (cd "$work" && apt-get download -qq -o APT::Sandbox::User=root busybox-static)
  mkdir -p "$work/helper"
  dpkg-deb -x "$work"/busybox-static_*.deb "$work/helper"
  rm -rf "$work/helper/usr/share"
  for tool in sh mkdir rm ls cat; do ln -s busybox "$work/helper/bin/$tool"; done
  mkdir -p "$work/helper/tmp" && chmod 1777 "$work/helper/tmp"
  build helper "$helper_ref" "$helper_archive" "$work/helper" '["/bin/sh"]'
fi

cat <<OUT
PAUSE_IMAGE_REF=$pause_ref
PAUSE_IMAGE_ARCHIVE=$pause_archive
HELPER_IMAGE_REF=$helper_ref
HELPER_IMAGE_ARCHIVE=$helper_archive
OUT
