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
# The real node (real-node.ts): a kubelet and kube-proxy of the same Kubernetes release, a
# container runtime, CNI plugins, cluster DNS, the pod sandbox's pause program and a volume
# provisioner and a NetworkPolicy agent. Built only when asked for (`real-node`), as the real node is.
CONTAINERD_VERSION=${CONTAINERD_VERSION:-2.4.2}
CNI_PLUGINS_VERSION=${CNI_PLUGINS_VERSION:-1.10.0}
COREDNS_VERSION=${COREDNS_VERSION:-1.14.7}
PAUSE_VERSION=${PAUSE_VERSION:-3.10.2}
LOCAL_PATH_VERSION=${LOCAL_PATH_VERSION:-0.0.30}
NETWORK_POLICIES_VERSION=${NETWORK_POLICIES_VERSION:-0.8.0}
# Kueue (kueue.ts): quotas, priorities and fair sharing of GPUs; its CRDs and webhook
# configurations come from the same module. Built only when asked for (`kueue`).
KUEUE_VERSION=${KUEUE_VERSION:-0.17.0}
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

# kubelet and kube-proxy: the same throwaway module as the control plane's binaries (the Go build
# cache it leaves makes this a few minutes), into a folder of their own so that a cache made
# before the real node existed gains them without rebuilding the rest.
build_node_kubernetes() {
  local out=$CACHE/bin/kubelet-$K8S_VERSION src=$CACHE/src/kubernetes-$K8S_VERSION
  if [ -x "$out/kubelet" ] && [ -x "$out/kube-proxy" ]; then return; fi
  build_kubernetes
  log "building kubelet and kube-proxy v$K8S_VERSION (cold: about 4 minutes on 2 cores)"
  BUILT=1
  mkdir -p "$out"
  local major=${K8S_VERSION%%.*} minor=${K8S_VERSION#*.}
  minor=${minor%%.*}
  (
    cd "$src"
    local pkgs=(k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
    go get "${pkgs[@]/%/@v$K8S_VERSION}"
    local ldf="-s -w" p
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldf+=" -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
      ldf+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    go build -mod=mod "${GO_BUILD_FLAGS[@]}" -tags=selinux,notest,grpcnotrace -ldflags="$ldf" \
      -o "$out/.tmp/" "${pkgs[@]}"
    mv "$out/.tmp/kubelet" "$out/.tmp/kube-proxy" "$out/" && rmdir "$out/.tmp"
  )
}

# containerd, its runc shim and ctr (which imports the engine images). As a dependency of a
# throwaway module, without the snapshotters this machine cannot use.
build_containerd() {
  local out=$CACHE/bin/containerd-$CONTAINERD_VERSION src=$CACHE/src/containerd-$CONTAINERD_VERSION
  if [ -x "$out/containerd" ] && [ -x "$out/containerd-shim-runc-v2" ] && [ -x "$out/ctr" ]; then return; fi
  log "building containerd v$CONTAINERD_VERSION (cold: about a minute)"
  BUILT=1
  rm -rf "$src" && mkdir -p "$src" "$out"
  (
    cd "$src"
    printf 'module local/containerd-binaries\n\ngo 1.26.0\n' > go.mod
    local m=github.com/containerd/containerd/v2
    local pkgs=("$m/cmd/containerd" "$m/cmd/containerd-shim-runc-v2" "$m/cmd/ctr")
    go get "${pkgs[@]/%/@v$CONTAINERD_VERSION}"
    go build -mod=mod "${GO_BUILD_FLAGS[@]}" -tags=no_btrfs,no_zfs,no_devmapper \
      -ldflags="-s -w -X $m/version.Version=v$CONTAINERD_VERSION" -o "$out/.tmp/" "${pkgs[@]}"
    mv "$out/.tmp/"* "$out/" && rmdir "$out/.tmp"
  )
}

build_cni() {
  local out=$CACHE/bin/cni-plugins-$CNI_PLUGINS_VERSION m=github.com/containernetworking/plugins/plugins
  if [ -x "$out/bridge" ] && [ -x "$out/host-local" ] && [ -x "$out/loopback" ] && [ -x "$out/portmap" ]; then
    return
  fi
  log "installing CNI plugins v$CNI_PLUGINS_VERSION"
  BUILT=1
  mkdir -p "$out"
  GOBIN=$out go install "${GO_BUILD_FLAGS[@]}" -ldflags="-s -w" \
    "$m/main/bridge@v$CNI_PLUGINS_VERSION" "$m/ipam/host-local@v$CNI_PLUGINS_VERSION" \
    "$m/main/loopback@v$CNI_PLUGINS_VERSION" "$m/meta/portmap@v$CNI_PLUGINS_VERSION"
}

# CoreDNS with only the plugins the node's cluster DNS uses: names come from the apiserver
# (kubernetes) and nothing outside the machine resolves, so there is no forwarder.
build_coredns() {
  local out=$CACHE/bin/coredns-$COREDNS_VERSION src=$CACHE/src/coredns-$COREDNS_VERSION
  [ -x "$out/coredns" ] && return
  log "building CoreDNS v$COREDNS_VERSION (cold: about a minute)"
  BUILT=1
  rm -rf "$src" && mkdir -p "$src" "$out"
  (
    cd "$src"
    printf 'module local/coredns-binary\n\ngo 1.26.0\n' > go.mod
    cat > main.go <<'GO'
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

// The order in which the plugins handle a query: CoreDNS's own order, for these plugins.
func init() {
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "log", "cache", "kubernetes"}
}

func main() { coremain.Run() }
GO
    go get "github.com/coredns/coredns@v$COREDNS_VERSION"
    go build -mod=mod "${GO_BUILD_FLAGS[@]}" -ldflags="-s -w" -o "$out/coredns.tmp" .
    mv "$out/coredns.tmp" "$out/coredns"
  )
}

# The pod sandbox's pause program, from the Kubernetes release's own source, linked statically
# (the node's pause image holds nothing else).
build_pause() {
  local out=$CACHE/bin/pause-$PAUSE_VERSION
  [ -x "$out/pause" ] && return
  log "building pause $PAUSE_VERSION"
  BUILT=1
  mkdir -p "$out"
  local kdir
  kdir=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  gcc -Os -static -Wall -Werror -DVERSION="v$PAUSE_VERSION" -o "$out/pause.tmp" "$kdir/build/pause/linux/pause.c"
  strip "$out/pause.tmp" && mv "$out/pause.tmp" "$out/pause"
}

# Dynamic volumes on the real node (the module has no vendor folder, hence -mod=mod).
build_local_path() {
  local out=$CACHE/bin/local-path-provisioner-$LOCAL_PATH_VERSION src=$CACHE/src/local-path-provisioner-$LOCAL_PATH_VERSION
  [ -x "$out/local-path-provisioner" ] && return
  log "building local-path-provisioner v$LOCAL_PATH_VERSION (cold: about 1.5 minutes)"
  BUILT=1
  rm -rf "$src" && mkdir -p "$src" "$out"
  (
    cd "$src"
    printf 'module local/local-path-binary\n\ngo 1.26.0\n' > go.mod
    go get "github.com/rancher/local-path-provisioner@v$LOCAL_PATH_VERSION"
    go build -mod=mod "${GO_BUILD_FLAGS[@]}" -ldflags="-s -w" -o "$out/local-path-provisioner.tmp" \
      github.com/rancher/local-path-provisioner
    mv "$out/local-path-provisioner.tmp" "$out/local-path-provisioner"
  )
}

# Kueue's manager, from its module's own source tree (its CRDs and webhook manifests are read
# from there too). Two paths are changed at build time: when it does not manage certificates
# itself it reads its metrics server's and its visibility API's certificates from fixed paths
# under / (/etc/kueue/metrics/certs, /visibility), which a manager out of cluster should not
# need. Both point at a self-signed loopback certificate made here, once per machine: the
# metrics server is off, and the apiserver reaches the visibility API without verifying it, as
# Kueue's own APIService says.
build_kueue() {
  local out=$CACHE/bin/kueue-$KUEUE_VERSION src=$CACHE/src/kueue-$KUEUE_VERSION
  [ -x "$out/kueue" ] && [ -d "$out/config" ] && [ -f "$out/certs/tls.crt" ] && return
  log "building Kueue v$KUEUE_VERSION (cold: about 3 minutes)"
  BUILT=1
  rm -rf "$src" "$out" && mkdir -p "$(dirname "$src")" "$out/certs" "$out/config"
  local mod
  mod=$(go mod download -json "sigs.k8s.io/kueue@v$KUEUE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  cp -r "$mod" "$src" && chmod -R u+w "$src"
  patch_literal "$src/cmd/kueue/main.go" 'metricsCertPath := "/etc/kueue/metrics/certs"' \
    "metricsCertPath := \"$out/certs\""
  patch_literal "$src/pkg/visibility/server.go" 'certDir = "/visibility"' "certDir = \"$out/certs\""
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -subj /CN=kueue -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
    -keyout "$out/certs/tls.key" -out "$out/certs/tls.crt" 2>/dev/null
  (
    cd "$src"
    go build -mod=mod "${GO_BUILD_FLAGS[@]}" -ldflags="-s -w" -o "$out/kueue.tmp" ./cmd/kueue
  )
  cp -r "$src/config/components/crd/bases" "$out/config/crds"
  cp "$src/config/components/webhook/manifests.yaml" "$out/config/webhooks.yaml"
  mv "$out/kueue.tmp" "$out/kueue"
}

# patch_literal FILE OLD NEW: replaces the line text OLD in FILE, failing when it is not there
# (a new release that moved it must be looked at, not built blindly).
patch_literal() {
  local file=$1 old=$2 new=$3
  grep -qF "$old" "$file" || { log "$file no longer has: $old"; return 1; }
  OLD=$old NEW=$new perl -0pi -e 's/\Q$ENV{OLD}\E/$ENV{NEW}/' "$file"
}

# The real node's NetworkPolicy agent: kube-network-policies' controller decides each new pod
# connection that netfilter queues to it. Its own main reads only in-cluster configuration, and
# the node runs outside the cluster, so this main takes a kubeconfig instead.
build_network_policies() {
  local out=$CACHE/bin/kube-network-policies-$NETWORK_POLICIES_VERSION
  local src=$CACHE/src/kube-network-policies-$NETWORK_POLICIES_VERSION
  [ -x "$out/kube-network-policies" ] && return
  log "building kube-network-policies v$NETWORK_POLICIES_VERSION (cold: about 2 minutes)"
  BUILT=1
  rm -rf "$src" && mkdir -p "$src" "$out"
  (
    cd "$src"
    printf 'module local/network-policy-agent\n\ngo 1.26.0\n' > go.mod
    cat > main.go <<'GO'
// Command kube-network-policies runs the NetworkPolicy controller for one node, outside the
// cluster: it watches policies, namespaces and pods through a kubeconfig and gives a verdict on
// every packet that netfilter sends to its queue.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster whose policies to enforce")
	nodeName := flag.String("node-name", "", "the node whose pods to protect")
	queueID := flag.Int("nfqueue-id", 100, "the netfilter queue that new connections arrive on")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" || *nodeName == "" {
		klog.Fatal("--kubeconfig and --node-name are required")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Fatalf("reading kubeconfig: %v", err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		klog.Fatalf("creating client: %v", err)
	}
	factory := informers.NewSharedInformerFactory(client, 0)

	controller, err := networkpolicy.NewController(
		client,
		factory.Networking().V1().NetworkPolicies(),
		factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods(),
		// Nodes and the client for the (alpha) admin policies serve only those policies, which
		// stay off.
		nil, nil, nil, nil,
		networkpolicy.Config{
			QueueID:  *queueID,
			NodeName: *nodeName,
			// Fail closed: a full queue drops the packet rather than letting it through unjudged.
			FailOpen: false,
			// Only for the controller's own nftables DNS rules, which this node does not use.
			NetfilterBug1766Fix: false,
			// Warning: NRIdisabled must stay false in v0.8.0. With it set, looking up an address
			// that no pod in the informer holds dereferences a nil plugin and panics. Enabled, the
			// plugin merely fails to reach a runtime socket and the controller uses the
			// apiserver's pod addresses alone.
			NRIdisabled: false,
		},
	)
	if err != nil {
		klog.Fatalf("creating the controller: %v", err)
	}
	factory.Start(ctx.Done())
	// Run binds the queue once the informers have synced and returns when ctx ends.
	if err := controller.Run(ctx); err != nil {
		klog.Errorf("controller stopped: %v", err)
		os.Exit(1)
	}
}
GO
    go get "sigs.k8s.io/kube-network-policies@v$NETWORK_POLICIES_VERSION"
    go build -mod=mod "${GO_BUILD_FLAGS[@]}" -ldflags="-s -w" -o "$out/kube-network-policies.tmp" .
    mv "$out/kube-network-policies.tmp" "$out/kube-network-policies"
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

# One build at a time per machine: parallel test files all ask for the binaries on a cold
# machine, and two builds of one component would delete each other's source folder.
mkdir -p "$CACHE"
exec 9>"$CACHE/.build-binaries.lock"
flock 9

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
    real-node)
      timed kubelet build_node_kubernetes
      timed containerd build_containerd
      timed cni build_cni
      timed coredns build_coredns
      timed pause build_pause
      timed local-path-provisioner build_local_path
      timed kube-network-policies build_network_policies
      ;;
    kueue) timed kueue build_kueue ;;
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
KUBELET_BIN=$CACHE/bin/kubelet-$K8S_VERSION
CONTAINERD_BIN=$CACHE/bin/containerd-$CONTAINERD_VERSION
CNI_BIN=$CACHE/bin/cni-plugins-$CNI_PLUGINS_VERSION
COREDNS_BIN=$CACHE/bin/coredns-$COREDNS_VERSION
PAUSE_BIN=$CACHE/bin/pause-$PAUSE_VERSION
PAUSE_VERSION=$PAUSE_VERSION
LOCAL_PATH_BIN=$CACHE/bin/local-path-provisioner-$LOCAL_PATH_VERSION
NETWORK_POLICIES_BIN=$CACHE/bin/kube-network-policies-$NETWORK_POLICIES_VERSION
KUEUE_BIN=$CACHE/bin/kueue-$KUEUE_VERSION
OUT
