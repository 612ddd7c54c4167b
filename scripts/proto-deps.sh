#!/usr/bin/env bash
# Copies the googleapis .proto files that proto/ imports from the pinned google-proto-files npm
# package into .gen-deps/, so buf compiles offline with no remote registry.
set -euo pipefail
cd "$(dirname "$0")/.."
src=node_modules/google-proto-files
rm -rf .gen-deps && mkdir -p .gen-deps/google/api .gen-deps/google/rpc
for f in annotations http field_behavior resource client launch_stage httpbody; do
  cp "$src/google/api/$f.proto" .gen-deps/google/api/
done
for f in status error_details code; do
  cp "$src/google/rpc/$f.proto" .gen-deps/google/rpc/
done
