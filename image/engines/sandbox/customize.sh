#!/usr/bin/env bash
# mmdebstrap's customize hook of the sandbox image (build.sh): $1 the root.
set -euo pipefail
root="$1"
"$(dirname "$0")/../finish-root.sh" "$root" sandbox /home/sandbox /bin/sh
mkdir -p "$root/workspace"
chown 1000:1000 "$root/workspace"
