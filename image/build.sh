#!/usr/bin/env bash
# `make image`: builds the product's OCI image without a container daemon (podman + runc,
# mmdebstrap) and writes it with its software bill of materials under dist/image/:
#   ai-engine-manager-<version>.oci.tar            the image, as an OCI archive
#   ai-engine-manager-<version>.sbom.cdx.json      CycloneDX: npm packages, Node.js, Debian packages
#   ai-engine-manager-<version>.debian-packages.txt the Debian packages of the base
# The image also stays in podman's local storage as localhost/ai-engine-manager:<version>.
# Environment: NODE (the Node.js 24 binary to ship), IMAGE_SOURCE (the source repository's URL,
# for the org.opencontainers.image.source label).
set -euo pipefail
cd "$(dirname "$0")/.."

: "${NODE:?NODE must name the Node.js binary to ship}"
version=$("$NODE" -p 'require("./package.json").version')
revision=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain -- gateway operator shared package.json package-lock.json image)" ]; then
  revision="$revision-dirty"
fi
source_url="${IMAGE_SOURCE:-$(git remote get-url origin 2>/dev/null || echo unknown)}"
# Never credentials in a published label (CI checkouts often carry a token in the remote's URL).
source_url=$(sed -E 's#://[^/@]+@#://#' <<<"$source_url")
# File times and the image's creation time are the last commit's (the Debian packages are
# bookworm's current ones at build time).
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
name="ai-engine-manager-$version"
image="localhost/ai-engine-manager:$version"
out=dist/image
work="$out/work"
rm -rf "$work" && mkdir -p "$work/context/app"
# podman on these machines: runc (crun cannot use hybrid cgroups) and explicit limits.
podman=(podman --runtime runc)
limits=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

echo "Base: Debian bookworm packages (mmdebstrap)"
# The host's package lists may be missing or stale (cleaned images): refresh them once if needed.
download_ca() { (cd "$work" && apt-get download -qq -o APT::Sandbox::User=root ca-certificates); }
download_ca 2>/dev/null || { apt-get update -qq && download_ca; }
ca_debs=("$work"/ca-certificates_*.deb)
[ "${#ca_debs[@]}" -eq 1 ] && [ -f "${ca_debs[0]}" ] || { echo "expected one ca-certificates package" >&2; exit 1; }
mmdebstrap --quiet --variant=extract --include=libc6,libgcc-s1,libstdc++6,base-files,netbase \
  --extract-hook="image/finish-base.sh \"\$1\" \"$PWD/${ca_debs[0]}\" \"$PWD/$out/$name.debian-packages.txt\"" \
  bookworm "$work/base.tar"
base="localhost/ai-engine-manager-base:$version"
"${podman[@]}" import --quiet "$work/base.tar" "$base" >/dev/null

echo "App: sources and production dependencies"
app="$work/context/app"
cp package.json package-lock.json "$app/"
for dir in gateway operator shared; do
  # Sources only: no tests, no code generators.
  tar -c --exclude='*.test.ts' --exclude='tools' --exclude='node_modules' "$dir" | tar -x -C "$app"
done
(cd "$app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
# The shipped package.json names no development tools, and the SBOM is read from the installed
# tree (npm's lock-only reading leaves out packages that development tools share).
"$NODE" -e 'const fs = require("fs"); const p = JSON.parse(fs.readFileSync(process.argv[1]));
  delete p.devDependencies; delete p.scripts; fs.writeFileSync(process.argv[1], JSON.stringify(p, null, 2) + "\n");' \
  "$app/package.json"
(cd "$app" && npm sbom --omit=dev --sbom-format=cyclonedx --sbom-type=application --loglevel=error >"../../npm-sbom.json")
# What Node never reads at run time: type declarations and sources (Node does not strip types
# under node_modules), source maps, and documents other than licences.
find "$app/node_modules" -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' \
  -o -name '*.md' -o -name '*.markdown' \) ! -iname 'licen[cs]e*' -delete
rm "$app/package-lock.json"
cp "$NODE" "$work/context/node"
strip "$work/context/node"

echo "Image: $image"
"${podman[@]}" build --quiet "${limits[@]}" --timestamp "$SOURCE_DATE_EPOCH" \
  --file image/Containerfile --build-arg "BASE=$base" \
  --label "org.opencontainers.image.title=AI Engine Manager" \
  --label "org.opencontainers.image.description=The gateway and the operator of AI Engine Manager" \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$revision" \
  --label "org.opencontainers.image.source=$source_url" \
  --label "org.opencontainers.image.licenses=Apache-2.0" \
  --tag "$image" "$work/context" >/dev/null
rm -f "$out/$name.oci.tar"
"${podman[@]}" save --quiet --format oci-archive --output "$out/$name.oci.tar" "$image"
"$NODE" image/sbom.ts "$work/npm-sbom.json" "$out/$name.debian-packages.txt" "$("$NODE" --version)" \
  >"$out/$name.sbom.cdx.json"
rm -rf "$work"

size=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
echo "Built $image: $((size / 1000000)) MB uncompressed, $(($(stat -c %s "$out/$name.oci.tar") / 1000000)) MB archive"
echo "  $out/$name.oci.tar"
echo "  $out/$name.sbom.cdx.json"
echo "  $out/$name.debian-packages.txt"
