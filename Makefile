# toolnode: `make` builds everything (installing missing system packages first),
# `make run` starts the node over ./examples and ./bundles, `make test` runs every test,
# `make bench` prints the benchmark table. Building and running need only RUN_DEB_PACKAGES;
# the tests' peers (TEST_DEB_PACKAGES, the venv, the npm peers, Hydra) come with `make test`.

GO      ?= go
PYTHON3 ?= python3
VENV    := build/venv
HTTP    ?= 127.0.0.1:7777

# Debian packages the node, the examples and the MEOS bundle need to build and run.
RUN_DEB_PACKAGES := libjansson-dev tzdata unzip
# Debian packages only the tests need: valgrind for the C tests, real Prometheus and NATS
# servers as peers, Chromium to render MCP Apps views, HAProxy in front of replicas,
# abigail-tools (abidiff) to hold the C SDK's ABI to the last release.
TEST_DEB_PACKAGES := valgrind prometheus nats-server chromium haproxy abigail-tools
# The official MCP Python client and pytest, for the Python tests; mypy for the SDK's
# --strict type check; build and setuptools (the SDK's build backend) to build its wheel
# and sdist as a release does.
PY_TEST_PACKAGES := pytest==9.2.0 mcp==2.3.0 mypy==2.4.1 build==1.6.1 setuptools==84.2.1

.PHONY: all deps deps-run toolnode examples fixtures bundles run test test-go test-cross test-darwin-proc test-c test-python test-app test-meos test-frameworks test-frameworks-slice test-clients fuzz bench bench-bundles bench-peers dist test-release clean

all: deps-run toolnode examples bundles

# What building and running need.
deps-run: build/.deps-run

# What the tests need besides.
deps: deps-run build/.deps-test $(VENV)/.ok build/npm/.ok

# Installs only what is missing, so a machine that has everything needs no root. Where
# there is no dpkg (macOS), it says what the build needs instead.
build/.deps-run: DEB_PACKAGES = $(RUN_DEB_PACKAGES)
build/.deps-test: DEB_PACKAGES = $(TEST_DEB_PACKAGES)
build/.deps-run build/.deps-test: Makefile
	@mkdir -p build
	@if ! command -v dpkg >/dev/null; then \
		echo "no dpkg here: the C SDK and bundles need jansson and pkg-config (macOS: brew install jansson pkg-config)"; \
		touch $@; exit 0; \
	fi; \
	missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi
	@touch $@

$(VENV)/.ok: Makefile
	@echo "preparing $(VENV) (pytest, official MCP Python client)"
	@$(PYTHON3) -m venv $(VENV)
	@$(VENV)/bin/pip install --disable-pip-version-check $(PY_TEST_PACKAGES)
	@touch $@

# Peers for tests (official TypeScript client, conformance suite on Node 22, real servers),
# pinned in testdata/npm/package.json.
build/npm/.ok: testdata/npm/package.json
	@echo "installing test peers from npm into build/npm"
	@mkdir -p build/npm && cp testdata/npm/package.json build/npm/
	@cd build/npm && npm install --no-audit --no-fund
	@touch $@

toolnode:
	$(GO) build -o bin/toolnode ./runtime/cmd/toolnode

# The node as $(PREFIX)/bin/toolnode, so that `toolnode` is on PATH as the docs, the hints of
# `toolnode new` and the application libraries assume. PREFIX=$$HOME/.local needs no root;
# DESTDIR stages it for a package. A checkout's bin/ on PATH does the same without copying.
PREFIX ?= /usr/local
.PHONY: install
install: toolnode
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 bin/toolnode $(DESTDIR)$(PREFIX)/bin/toolnode
	@echo "installed $(DESTDIR)$(PREFIX)/bin/toolnode; $(PREFIX)/bin must be on PATH"

examples: deps-run
	$(GO) build -o examples/go/build/example-go ./examples/go
	$(MAKE) -C examples/c
	$(MAKE) -C examples/python

# The bundles the official conformance suite is run against, one per SDK: test fixtures.
fixtures: deps-run
	$(GO) build -o testdata/conformance/go/build/conformance ./testdata/conformance/go
	$(MAKE) -C testdata/conformance/c
	$(MAKE) -C testdata/conformance/python

bundles: deps-run
	$(MAKE) -C bundles/meos

run: all
	@echo
	@echo "toolnode is serving ./examples and ./bundles over Streamable HTTP at http://$(HTTP)/mcp"
	@echo "Connect a client, e.g.:"
	@echo "  npx --yes @modelcontextprotocol/inspector --cli http://$(HTTP)/mcp --transport http --method tools/list"
	@echo "  (tools/list answers in pages of 500: the Inspector's --cli shows the first; toolnode tools --url http://$(HTTP)/mcp lists all)"
	@echo "or in Claude Desktop / Cursor, over stdio:"
	@echo '  {"mcpServers": {"toolnode": {"command": "$(CURDIR)/bin/toolnode", "args": ["serve", "--bundles", "$(CURDIR)/examples", "--bundles", "$(CURDIR)/bundles"]}}}'
	@echo
	bin/toolnode serve --bundles examples --bundles bundles --http $(HTTP)

test: all deps fixtures test-go test-c test-python test-app test-meos test-frameworks-slice

# ORY Hydra, the OpenID provider the OAuth tests run (runtime/internal/oauth/oauthtest). Its go.mod
# replaces its API client by a directory the module zip leaves out, so `go install` refuses
# it: build a copy with that replace dropped, as a module of its own (GOWORK=off: not one of
# this checkout's workspace). sqlite (cgo) backs its in-memory store.
HYDRA_VERSION := v2.3.0
build/hydra:
	@mkdir -p build
	@rm -rf build/hydra-src
	$(GO) mod download github.com/ory/hydra/v2@$(HYDRA_VERSION)
	cp -r "$$($(GO) env GOMODCACHE)/github.com/ory/hydra/v2@$(HYDRA_VERSION)" build/hydra-src && chmod -R u+w build/hydra-src
	cd build/hydra-src && export GOWORK=off && $(GO) mod edit -dropreplace github.com/ory/hydra-client-go/v2 && \
		$(GO) get github.com/ory/hydra-client-go/v2@v2.2.1 && \
		CGO_ENABLED=1 $(GO) build -tags sqlite,sqlite_omit_load_extension -o ../hydra .
	@rm -rf build/hydra-src

# The node's module and the Go SDK's (a module of its own, joined to it by go.work).
GO_PACKAGES := ./... ./sdk-go/...

test-go: build/hydra
	$(GO) vet $(GO_PACKAGES)
	$(MAKE) test-cross
	# The conformance package runs every SDK's bundle through the official suite: on a busy
	# 2-core machine it can pass go test's default 10 minutes without anything being wrong.
	$(GO) test -timeout 25m $(GO_PACKAGES)
	$(MAKE) test-darwin-proc
	$(MAKE) fuzz FUZZTIME=$(FUZZSLICE) FUZZMINIMIZE=$(FUZZSLICE)

# The other systems the node runs on: for each, go vet of both modules (which type-checks
# the tests too), every test binary compiled and linked (run by /bin/true: they run on
# their own system), and the node itself linked. CROSS is GOOS/GOARCH pairs.
CROSS ?= darwin/arm64 darwin/amd64 windows/amd64
test-cross:
	@set -e; for p in $(CROSS); do \
	  echo "cross: vet, tests compiled and the node linked for $$p"; \
	  export GOOS=$${p%/*} GOARCH=$${p#*/}; \
	  $(GO) vet $(GO_PACKAGES); \
	  $(GO) test -vet=off -exec /bin/true $(GO_PACKAGES) >/dev/null; \
	  $(GO) build -o /dev/null ./runtime/cmd/toolnode; \
	done

# The runtime's tests again with the macOS supervision compiled in on Linux (proc's build tag
# toolnode_darwin_proc). make test runs the packages whose tests start, stop, restart and kill
# processes and the node itself, where that supervision is what runs; the fronts' and the
# cluster's tests reach it only through them and would double make test's longest packages.
# `make test-darwin-proc DARWIN_PROC_PACKAGES=./runtime/...` runs the whole suite so.
DARWIN_PROC_TAG := toolnode_darwin_proc
DARWIN_PROC_PACKAGES ?= ./runtime/internal/proc/... ./runtime/internal/upstream/... ./runtime/internal/node/... \
	./runtime/internal/serve/... ./runtime/internal/cli/... ./runtime/internal/codemode/worker/...
test-darwin-proc:
	$(GO) vet -tags $(DARWIN_PROC_TAG) ./runtime/...
	$(GO) test -tags $(DARWIN_PROC_TAG) $(DARWIN_PROC_PACKAGES)

# Runs every fuzz target (a func Fuzz... in a Go test file) for FUZZTIME each (a duration,
# or a count of inputs such as 200000x). Their seed corpora (testdata/fuzz) run in every go
# test; make test runs a slice of FUZZSLICE inputs of each: a count, not a duration, since a
# duration races the fuzz coordinator's own deadline on a loaded machine and fails a target
# that found nothing ("context deadline exceeded"). FUZZMINIMIZE bounds the minimizing of
# each new input (go test's -fuzzminimizetime).
FUZZTIME ?= 5m
FUZZMINIMIZE ?= 60s
FUZZSLICE ?= 200000x
fuzz:
	@set -e; for file in $$(grep -rl --include='*_test.go' '^func Fuzz' runtime sdk-go | sort); do \
	  for f in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
	    echo "fuzz $$f in ./$$(dirname $$file) for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./$$(dirname $$file); \
	  done; \
	done

test-c:
	$(MAKE) -C sdk-c test

test-python:
	$(MAKE) -C sdk-python test PYTHON=$(CURDIR)/$(VENV)/bin/python

test-meos:
	$(MAKE) -C bundles/meos test

# The application library (sdk-python's toolnode_sdk.app) against the model APIs' official
# SDKs, pinned here, in a venv of its own; and NVIDIA DataDesigner's MCP layer, a thin client
# of the node, in another (it pins the MCP Python SDK 1.x).
APP_VENV := build/app-venv
PY_APP_PACKAGES := pytest==9.2.0 mcp==2.3.0 openai==3.51.0 anthropic==2.10.0 google-genai==3.3.0
DD_VENV := build/dd-venv
PY_DD_PACKAGES := data-designer==0.9.7

$(APP_VENV)/.ok: Makefile
	@echo "preparing $(APP_VENV) (the model APIs' official SDKs)"
	@$(PYTHON3) -m venv $(APP_VENV)
	@$(APP_VENV)/bin/pip install --disable-pip-version-check -q $(PY_APP_PACKAGES)
	@touch $@

$(DD_VENV)/.ok: Makefile
	@echo "preparing $(DD_VENV) (NVIDIA DataDesigner, a thin MCP client)"
	@$(PYTHON3) -m venv $(DD_VENV)
	@$(DD_VENV)/bin/pip install --disable-pip-version-check -q $(PY_DD_PACKAGES)
	@touch $@

# The agent frameworks on PyPI against a node with make run's bundles and default flags
# (testdata/frameworks/check.py): the names each would hand a model, and the greeting and a
# MEOS tool called through its own tool objects, over stdio and HTTP, no model called. Each
# in the venv its pins allow (fastmcp 4.2 needs the MCP SDK 2, the others 1). make test runs
# fastmcp 4.1 (the Python SDK's client name, mcp) only; test-frameworks runs them all.
FW_VENV := build/fw-venv
PY_FW_PACKAGES := openai-agents==0.24.0 langchain-mcp-adapters==0.3.2 "pydantic-ai-slim[mcp]==2.68.0"
FW42_VENV := build/fw42-venv
PY_FW42_PACKAGES := fastmcp==4.2.3 "pydantic-ai-slim[mcp]==2.68.0"
FW41_VENV := build/fw41-venv
PY_FW41_PACKAGES := fastmcp==4.1.7
FRAMEWORKS = testdata/frameworks/check.py --node bin/toolnode --root .

build/%-venv/.fw:
	@echo "preparing build/$*-venv (agent frameworks: $(PY_$(shell echo $* | tr a-z A-Z)_PACKAGES))"
	@$(PYTHON3) -m venv build/$*-venv
	@build/$*-venv/bin/pip install --disable-pip-version-check -q $(PY_$(shell echo $* | tr a-z A-Z)_PACKAGES)
	@touch $@

test-frameworks: all $(FW_VENV)/.fw $(FW42_VENV)/.fw $(FW41_VENV)/.fw
	$(FW_VENV)/bin/python $(FRAMEWORKS) openai-agents langchain pydantic-ai
	$(FW42_VENV)/bin/python $(FRAMEWORKS) fastmcp pydantic-ai
	$(FW41_VENV)/bin/python $(FRAMEWORKS) fastmcp

test-frameworks-slice: all $(FW41_VENV)/.fw
	$(FW41_VENV)/bin/python $(FRAMEWORKS) fastmcp

# Every tool of make run's catalog searched and called by every host's client name
# (bundles/meos/clients_test.go; make test runs a slice of the MEOS tools).
test-clients: all
	TOOLNODE_CLIENTS_ALL=1 $(GO) test -count=1 -timeout 60m -run 'TestClientsGetToolsTheirModelsTake' ./bundles/meos

test-app: toolnode fixtures $(APP_VENV)/.ok $(DD_VENV)/.ok
	PYTHONDONTWRITEBYTECODE=1 $(APP_VENV)/bin/python -m pytest -p no:cacheprovider -q -rs sdk-python/tests/app

# Bundles the benchmarks run (testdata/bench/README.md says which does what).
bench-bundles: deps
	$(GO) build -o testdata/bench/echo-go/build/echo-go ./testdata/bench/echo-go
	$(GO) build -o testdata/bench/many-go/build/many-go ./testdata/bench/many-go
	$(MAKE) -C testdata/bench/echo-c

bench: all bench-bundles
	$(GO) run ./runtime/cmd/bench

# Other MCP gateways measured beside the node, pinned in testdata/bench/peers/package.json.
build/npm-peers/.ok: testdata/bench/peers/package.json
	@echo "installing gateways to compare with from npm into build/npm-peers"
	@mkdir -p build/npm-peers && cp testdata/bench/peers/package.json build/npm-peers/
	@cd build/npm-peers && npm install --no-audit --no-fund
	@touch $@

# The Python gateways to compare with, pinned here, in a venv of their own: they run on the
# MCP Python SDK 1.x, and the test venv holds 2.x.
PY_PEER_PACKAGES := mcp-contextforge-gateway==1.0.7 mcp-proxy==0.13.0

build/py-peers/.ok: Makefile
	@echo "installing gateways to compare with from PyPI into build/py-peers"
	@$(PYTHON3) -m venv build/py-peers
	@build/py-peers/bin/pip install --disable-pip-version-check $(PY_PEER_PACKAGES)
	@touch $@

bench-peers: all bench-bundles build/npm-peers/.ok build/py-peers/.ok
	$(GO) run ./runtime/cmd/bench -peers

# Profiles the node's HTTP front under the echo load and prints where its CPU goes per call.
.PHONY: bench-http-profile
bench-http-profile: all bench-bundles
	$(GO) run ./runtime/cmd/bench -profile-http build/http-front.pprof

# A release's artifacts, with their SHA-256 checksums, in DIST (build/dist):
# - toolnode-VERSION-OS-ARCH, the node for each system it runs on (DIST_PLATFORMS): static
#   (no cgo) and built with -trimpath, so that the same source gives the same bytes;
# - tn-VERSION-OS-ARCH.tar.gz, the C SDK for this system (header, static and shared
#   library, pkg-config file);
# - toolnode_sdk-VERSION-py3-none-any.whl and toolnode_sdk-VERSION.tar.gz, the Python SDK
#   (python -m build, with the backend pinned in the test venv);
# - SHA256SUMS (sha256sum -c and shasum -a 256 -c read it), printed at the end.
# docs/releasing.md says how a release is cut and checked.
DIST_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST ?= build/dist
VERSION := $(shell cat VERSION)
SHA256SUM := $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo shasum -a 256)
dist: deps-run $(VENV)/.ok
	@rm -rf $(DIST) && mkdir -p $(DIST)
	@set -e; for p in $(DIST_PLATFORMS); do \
	  echo "dist: toolnode $(VERSION) for $$p"; \
	  CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -trimpath -ldflags=-buildid= \
	    -o $(DIST)/toolnode-$(VERSION)-$${p%/*}-$${p#*/} ./runtime/cmd/toolnode; \
	done
	@echo "dist: the C SDK for $$($(GO) env GOOS)-$$($(GO) env GOARCH)"
	$(MAKE) -C sdk-c dist DIST=$(abspath $(DIST)) PLATFORM=$$($(GO) env GOOS)-$$($(GO) env GOARCH)
	@echo "dist: the Python SDK's wheel and sdist"
	@rm -rf build/python-dist && mkdir -p build/python-dist
	cd sdk-python && $(CURDIR)/$(VENV)/bin/python -m build --no-isolation --outdir $(CURDIR)/build/python-dist .
	cp build/python-dist/* $(DIST)/
	cd $(DIST) && $(SHA256SUM) toolnode-* toolnode_sdk-* tn-* > SHA256SUMS
	@echo "dist: $(DIST)"
	@cat $(DIST)/SHA256SUMS

# The release checks that take minutes (docs/releasing.md): this tree, as tagged, installs
# from a module proxy on disk (go install of the node, go get of the SDK by a new bundle,
# no workspace), and make dist's artifacts install and serve. make test runs the quick
# ones (versions, the SDK's API against the last release, the C ABI).
test-release: deps-run $(VENV)/.ok
	TOOLNODE_RELEASE_TESTS=1 $(GO) test -count=1 -v -run 'TestTaggedTreeInstallsFromAModuleProxy|TestDistArtifactsInstallAndServe' ./runtime/internal/release

clean:
	rm -rf bin build examples/*/build testdata/bench/*/build
	$(MAKE) -C sdk-c clean
	$(MAKE) -C examples/c clean
	$(MAKE) -C bundles/meos clean
