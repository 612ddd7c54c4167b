#!/usr/bin/env bash
# mmdebstrap's customize hook of the notebook engine image (build.sh): $1 the root, $2 the
# inputs (wheels/, every one requirements.txt names). JupyterLab goes into a venv of Debian's
# Python at /opt/jupyter, compiled now: a read-only root cannot take byte code later.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root="$1"
"$here/../finish-root.sh" "$root" jovyan /home/jovyan /bin/bash
cp -r "$2/wheels" "$root/tmp/wheels"
cp "$here/requirements.txt" "$root/tmp/requirements.txt"
chroot "$root" python3 -m venv /opt/jupyter
chroot "$root" /opt/jupyter/bin/pip install --quiet --disable-pip-version-check --no-cache-dir \
  --no-index --no-deps --require-hashes --find-links /tmp/wheels -r /tmp/requirements.txt
rm -rf "$root/tmp/wheels" "$root/tmp/requirements.txt"
install -m 0755 "$here/entrypoint.sh" "$root/usr/local/bin/notebook-engine"
