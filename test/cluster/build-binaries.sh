#!/usr/bin/env bash
# Builds the local control plane's binaries from Go modules, once per machine, into a cache
# outside the repository keyed by version:
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (one Kubernetes release),
#   etcd, kwok, helm, protoc-gen-openapiv2, grpcurl (gRPC reflection checks) and metrics-server
#   (the metrics.k8s.io API that sandbox metrics read; clusters start it only when asked).
# A binary that already exists is not rebuilt, so warm runs take well under a second.
# Prints the bin directory of each component as KEY=path lines (consumed by cluster.ts and make).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.36.3}
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
KWOK_VERSION=${KWOK_VERSION:-0.8.0}
HELM_VERSION=${HELM_VERSION:-3.21.4}
OPENAPIV2_VERSION=${OPENAPIV2_VERSION:-2.30.0}
GRPCURL_VERSION=${GRPCURL_VERSION:-1.9.3}
METRICS_SERVER_VERSION=${METRICS_SERVER_VERSION:-0.8.0}
CACHE=${AIEM_CACHE:-$HOME/.cache/ai-engine-manager}

export GOTOOLCHAIN=local CGO_ENABLED=0
# Every build here is reproducible from the proxy; the flags below keep it quiet and static.
GO_BUILD_FLAGS=(-trimpath)

log() { printf '[build-binaries] %s\n' "$*" >&2; }

timed() { # timed NAME CMD... : runs CMD and logs its wall time when it built something
  local name=$1 start=$SECONDS; shift
  BUILT=0
  "$@"
  [ "$BUILT" = 1 ] && log "$name built in $((SECONDS - start))s"
  return 0
}

build_kubernetes() {
  local out=$CACHE/bin/kubernetes-$K8S_VERSION src=$CACHE/src/kubernetes-$K8S_VERSION
  if [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-controller-manager" ] \
     && [ -x "$out/kube-scheduler" ] && [ -x "$out/kubectl" ]; then return; fi
  log "building Kubernetes v$K8S_VERSION (cold: about 5 minutes on 2 cores)"
  BUILT=1
  local staging=v0.${K8S_VERSION#1.} major=${K8S_VERSION%%.*} minor=${K8S_VERSION#*.}
  minor=${minor%%.*}
  rm -rf "$src" && mkdir -p "$src" "$out"
  (
    cd "$src"
    printf 'module local/kubernetes-binaries\n\ngo 1.26.0\n' > go.mod
    # k8s.io/kubernetes points every staging module at ./staging; a consumer must map each to
    # its published v0.x release. The list comes from the release's own go.mod.
    local kmod
    kmod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" \
      | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
    local m
    for m in $(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\) => \./staging/src/.*#\1#p' "$kmod"); do
      go mod edit -replace="$m=$m@$staging"
    done
    local pkgs=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
                k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
    go get "${pkgs[@]/%/@v$K8S_VERSION}"
    # Same version stamps as upstream's hack/lib/version.sh: clients (kubectl, helm, kwokctl)
    # read /version and misbehave on the unstamped v0.0.0.
    local ldf="-s -w" p
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldf+=" -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
      ldf+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    go build -mod=mod "${GO_BUILD_FLAGS[@]}" -tags=selinux,notest,grpcnotrace -ldflags="$ldf" \
      -o "$out/" "${pkgs[@]}"
  )
}

build_etcd() {
  local out=$CACHE/bin/etcd-$ETCD_VERSION src=$CACHE/src/etcd-$ETCD_VERSION
  [ -x "$out/etcd" ] && return
  log "building etcd v$ETCD_VERSION"
  BUILT=1
  rm -rf "$src" && mkdir -p "$src" "$out"
  (
    cd "$src"
    # server/v3's own go.mod has replace directives, so `go install` refuses it; as a dependency
    # of a throwaway module those replaces are ignored.
    printf 'module local/etcd-binary\n\ngo 1.26.0\n' > go.mod
    go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
    go build -mod=mod "${GO_BUILD_FLAGS[@]}" -ldflags="-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
  )
}

build_go_install() { # build_go_install DIR BINARY LDFLAGS PACKAGE@VERSION...
  local out=$1 bin=$2 ldflags=$3; shift 3
  [ -x "$out/$bin" ] && return
  log "installing $*"
  BUILT=1
  mkdir -p "$out"
  GOBIN=$out go install "${GO_BUILD_FLAGS[@]}" -ldflags="$ldflags" "$@"
}

build_kwok() {
  local out=$CACHE/bin/kwok-$KWOK_VERSION
  build_go_install "$out" kwok \
    "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=v$KWOK_VERSION" \
    "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION"
  # The standalone kwok binary has no built-in stages and installs none of its CRDs; the module
  # ships both as data files. The cluster uses kwok's Logs CRD to simulate container logs, and
  # its Exec and ClusterExec CRDs to run sandbox commands on this host (sandbox-simulator.ts).
  # Each CRD is checked on its own, so a cache made before one was added gains it.
  # Its ResourceUsage CRD gives sandbox pods a simulated CPU and memory usage for metrics-server.
  local crds=(kwok.x-k8s.io_logs.yaml kwok.x-k8s.io_execs.yaml kwok.x-k8s.io_clusterexecs.yaml
              kwok.x-k8s.io_resourceusages.yaml) crd missing=0
  for crd in "${crds[@]}"; do [ -f "$out/crds/$crd" ] || missing=1; done
  [ -f "$out/metrics/metrics-resource.yaml" ] || missing=1
  if [ ! -d "$out/stages" ] || [ "$missing" = 1 ]; then
    local mod
    mod=$(go mod download -json "sigs.k8s.io/kwok@v$KWOK_VERSION" \
      | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
    if [ ! -d "$out/stages" ]; then
      mkdir -p "$out/stages.tmp"
      cp -r "$mod/kustomize/stage/node" "$mod/kustomize/stage/pod" "$out/stages.tmp/"
      chmod -R u+w "$out/stages.tmp" && mv "$out/stages.tmp" "$out/stages"
    fi
    mkdir -p "$out/crds"
    for crd in "${crds[@]}"; do
      [ -f "$out/crds/$crd" ] && continue
      # Copied under a temporary name and renamed: a concurrent run never sees half a file.
      cp "$mod/kustomize/crd/bases/$crd" "$out/crds/.$crd.tmp"
      chmod u+w "$out/crds/.$crd.tmp" && mv "$out/crds/.$crd.tmp" "$out/crds/$crd"
    done
    # kwok's Metric that serves the kubelet resource-metrics endpoint metrics-server scrapes.
    if [ ! -f "$out/metrics/metrics-resource.yaml" ]; then
      mkdir -p "$out/metrics"
      cp "$mod/kustomize/metrics/resource/metrics-resource.yaml" "$out/metrics/.tmp"
      chmod u+w "$out/metrics/.tmp" && mv "$out/metrics/.tmp" "$out/metrics/metrics-resource.yaml"
    fi
  fi
}

build_metrics_server() {
  local out=$CACHE/bin/metrics-server-$METRICS_SERVER_VERSION src=$CACHE/src/metrics-server-$METRICS_SERVER_VERSION
  [ -x "$out/metrics-server" ] && return
  log "building metrics-server v$METRICS_SERVER_VERSION (cold: about 1.5 minutes)"
  BUILT=1
  rm -rf "$src" && mkdir -p "$src" "$out"
  (
    cd "$src"
    printf 'module local/metrics-server-binary\n\ngo 1.26.0\n' > go.mod
    go get "sigs.k8s.io/metrics-server/cmd/metrics-server@v$METRICS_SERVER_VERSION"
    # Unstamped, it reports v0.0.0-master.
    local p=k8s.io/component-base/version
    go build -mod=mod "${GO_BUILD_FLAGS[@]}" \
      -ldflags="-s -w -X $p.gitVersion=v$METRICS_SERVER_VERSION -X $p.gitTreeState=clean" \
      -o "$out/metrics-server.tmp" sigs.k8s.io/metrics-server/cmd/metrics-server
    mv "$out/metrics-server.tmp" "$out/metrics-server"
  )
}

build_helm() {
  local k8s_minor=${K8S_VERSION#*.}; k8s_minor=${k8s_minor%%.*}
  build_go_install "$CACHE/bin/helm-$HELM_VERSION" helm \
    "-s -w -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION \
     -X helm.sh/helm/v3/internal/version.gitTreeState=clean \
     -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$k8s_minor \
     -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$k8s_minor" \
    "helm.sh/helm/v3/cmd/helm@v$HELM_VERSION"
}

build_openapiv2() {
  build_go_install "$CACHE/bin/protoc-gen-openapiv2-$OPENAPIV2_VERSION" protoc-gen-openapiv2 "-s -w" \
    "github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@v$OPENAPIV2_VERSION"
}

build_grpcurl() {
  build_go_install "$CACHE/bin/grpcurl-$GRPCURL_VERSION" grpcurl "-s -w -X main.version=v$GRPCURL_VERSION" \
    "github.com/fullstorydev/grpcurl/cmd/grpcurl@v$GRPCURL_VERSION"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(etcd kubernetes kwok helm openapiv2 grpcurl metrics-server)
for t in "${targets[@]}"; do
  case $t in
    kubernetes) timed kubernetes build_kubernetes ;;
    etcd) timed etcd build_etcd ;;
    kwok) timed kwok build_kwok ;;
    helm) timed helm build_helm ;;
    openapiv2) timed openapiv2 build_openapiv2 ;;
    grpcurl) timed grpcurl build_grpcurl ;;
    metrics-server) timed metrics-server build_metrics_server ;;
    *) log "unknown target $t"; exit 2 ;;
  esac
done

cat <<OUT
KUBERNETES_BIN=$CACHE/bin/kubernetes-$K8S_VERSION
ETCD_BIN=$CACHE/bin/etcd-$ETCD_VERSION
KWOK_BIN=$CACHE/bin/kwok-$KWOK_VERSION
HELM_BIN=$CACHE/bin/helm-$HELM_VERSION
OPENAPIV2_BIN=$CACHE/bin/protoc-gen-openapiv2-$OPENAPIV2_VERSION
GRPCURL_BIN=$CACHE/bin/grpcurl-$GRPCURL_VERSION
METRICS_SERVER_BIN=$CACHE/bin/metrics-server-$METRICS_SERVER_VERSION
OUT
