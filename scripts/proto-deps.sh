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
# google.type.Date: the dates of the DAI license metadata.
mkdir -p .gen-deps/google/type
cp "$src/google/type/date.proto" .gen-deps/google/type/
# The standard health and reflection services the gateway also serves: their descriptors go into
# the reflection descriptor set so that clients can describe them too.
mkdir -p .gen-deps/grpc/health/v1 .gen-deps/grpc/reflection/v1
cp node_modules/grpc-health-check/proto/health/v1/health.proto .gen-deps/grpc/health/v1/
cp node_modules/@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto .gen-deps/grpc/reflection/v1/
