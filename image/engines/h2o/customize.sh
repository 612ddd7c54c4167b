#!/usr/bin/env bash
# mmdebstrap's customize hook of the H2O-3 engine image (build.sh): $1 the root, $2 the inputs
# (h2o.jar).
set -euo pipefail
here=$(dirname "$0")
root="$1"
# H2O needs no home of its own: its files go to /tmp, the only writable place.
"$here/../finish-root.sh" "$root" h2o /tmp /usr/sbin/nologin
mkdir -p "$root/opt/h2o"
cp "$2/h2o.jar" "$root/opt/h2o/h2o.jar"
chmod 0644 "$root/opt/h2o/h2o.jar"
install -m 0755 "$here/entrypoint.sh" "$root/usr/local/bin/h2o-engine"
