#!/usr/bin/env bash
# mmdebstrap's customize hook shared by the engine images (build.sh): runs on the build machine
# with the finished root as $1, before it is packed. Adds the unprivileged user every engine runs
# as (uid and gid 1000: the operator's pods run as 1000:1000, and Debian's base-passwd leaves 1000
# free) and drops what a container never reads.
set -euo pipefail
root="$1"
user="$2"  # the name of uid 1000
home="$3"  # its home directory (created, owned by it)
shell="$4" # its login shell

echo "$user:x:1000:1000:$user:$home:$shell" >>"$root/etc/passwd"
echo "$user:x:1000:" >>"$root/etc/group"
mkdir -p "$root/tmp"
chmod 1777 "$root/tmp"
if [ "$home" != /tmp ]; then
  mkdir -p "$root$home"
  chown 1000:1000 "$root$home"
fi

# dpkg's path-exclude (build.sh) keeps these out of what apt installs; the essential packages are
# unpacked before it applies, so their copies go here. Licences stay.
find "$root/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete 2>/dev/null || true
find "$root/usr/share/doc" -mindepth 1 -depth -type d -empty -delete 2>/dev/null || true
rm -rf "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/lintian" "$root/usr/share/linda"
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} + 2>/dev/null || true
# Logs and caches of the installation itself; a read-only root never adds to them.
rm -rf "$root"/var/log/* "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old "$root"/etc/*-
