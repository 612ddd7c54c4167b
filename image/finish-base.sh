#!/usr/bin/env bash
# mmdebstrap's extract hook for the image's base (image/build.sh): runs on the build machine with
# the unpacked root as $1 and mmdebstrap's apt configuration in APT_CONFIG. Debian's maintainer
# scripts never run in an extracted root, so this does their work: the CA bundle, the users, and a
# dpkg status database that image scanners (Trivy, Grype, Syft) read to list what is inside.
set -euo pipefail
root="$1"
ca_deb="$2"   # Debian's ca-certificates package, downloaded by image/build.sh
packages="$3" # where the list of Debian packages in the image is written
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# CA certificates: only the certificates, not the package's dependencies (openssl, debconf) that
# its maintainer script needs to build the bundle; the bundle is built here instead.
dpkg-deb -x "$ca_deb" "$work/ca"
cp -a "$work/ca/usr/share/ca-certificates" "$root/usr/share/"
mkdir -p "$root/etc/ssl/certs"
find "$root/usr/share/ca-certificates" -name '*.crt' | LC_ALL=C sort | xargs cat >"$root/etc/ssl/certs/ca-certificates.crt"

# The users: root, and the unprivileged user the processes run as (distroless's numbering).
cat >"$root/etc/passwd" <<'USERS'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
USERS
cat >"$root/etc/group" <<'GROUPS'
root:x:0:
nonroot:x:65532:
GROUPS
mkdir -p "$root/home/nonroot" "$root/tmp"
chown 65532:65532 "$root/home/nonroot"
chmod 1777 "$root/tmp"

# mawk comes only because base-files' maintainer script needs an awk, and that script never runs
# here: its files go, so that the image holds no interpreter but Node.
for deb in "$root"/var/cache/apt/archives/mawk_*.deb; do
  [ -e "$deb" ] || continue # none pulled in
  dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's|^\./||' | while read -r path; do
    if [ -f "$root/$path" ] || [ -L "$root/$path" ]; then rm -f "$root/$path"; fi
  done
  rm -f "$deb"
done
find "$root/usr/share/doc/mawk" -depth -type d -empty -delete 2>/dev/null || true

# What is inside, from the packages' own control data: a status database and a plain list.
status="$root/var/lib/dpkg/status"
mkdir -p "$(dirname "$status")"
: >"$status"
: >"$packages"
for deb in "$root"/var/cache/apt/archives/*.deb "$ca_deb"; do
  {
    echo "Package: $(dpkg-deb -f "$deb" Package)"
    echo "Status: install ok installed"
    dpkg-deb -f "$deb" | grep -v '^Package:'
    echo
  } >>"$status"
  echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) $(dpkg-deb -f "$deb" Architecture)" >>"$packages"
done
sort -o "$packages" "$packages"
