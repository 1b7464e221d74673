# rehost — make targets. Run `make help` for the list.
GO      ?= go
GOTEST  ?= $(GO) test
BIN     ?= bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -s -w -X main.version=$(VERSION)

# The Go modules of this repository (go.work ties them together). The core
# (.: pkg/rewrite, pkg/manifest, pkg/rendered) requires only a YAML parser
# and says go 1.22, so that programs such as sealer can import it as they
# are; each heavy dependency lives in a module of its own: kyaml (pkg/krmfn,
# cmd/rehost-fn), go-containerregistry (pkg/mirror), Helm (pkg/helm,
# cmd/rehost-helm), cobra (the commands); the test modules link what only
# tests need (real binaries, ggcr's parser, Helm 4, sealer's Helm 3.9, the API server's
# admission plugins, every module for the documentation's programs). docs/modules.md.
MODULES  := . pkg/mirror pkg/krmfn pkg/helm cmd/rehost cmd/rehost-fn cmd/rehost-helm test/docs test/e2e test/helm4compat test/helm39 test/parity test/policy
# SOLO modules pin older versions of dependencies than the workspace's
# build list selects (test/helm39: sealer's Helm 3.9.4, where go.work
# selects pkg/helm's 3.22): they are vetted and tested with GOWORK=off.
SOLO     := test/helm39
PACKAGES := ./... $(foreach m,$(filter-out . $(SOLO),$(MODULES)),./$(m)/...)
BINARIES := ./cmd/rehost ./cmd/rehost-fn ./cmd/rehost-helm

.PHONY: help build test e2e lint modules fuzz bench bench-data bench-peers mutate clean print-modules

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/rehost, bin/rehost-helm and bin/rehost-fn
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ $(BINARIES)

# The SOLO modules run first, so that the workspace's run, the largest,
# prints the closing summary.
test: ## all tests with the race detector (end-to-end tests skip when helm/kustomize/registry are missing, except in CI)
	@for m in $(SOLO); do (cd $$m && GOWORK=off $(GOTEST) -race -timeout 20m ./...) || exit 1; done
	$(GOTEST) -race -timeout 40m $(PACKAGES)

e2e: ## only the end-to-end tests (real helm, kustomize and registry binaries on PATH)
	$(GOTEST) -count=1 -timeout 30m ./test/e2e/...

lint: modules ## gofmt, go vet, and every module tidy and buildable on its own
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PACKAGES)
	@for m in $(SOLO); do (cd $$m && GOWORK=off $(GO) vet ./...) || exit 1; done

modules: ## each module builds without go.work and its go.mod is tidy
	@for m in $(MODULES); do echo "module $$m"; (cd $$m && GOWORK=off $(GO) mod tidy -diff && GOWORK=off $(GO) build -o /dev/null ./...) || exit 1; done

fuzz: ## a short run of every fuzz target
	$(GO) test -run '^$$' -fuzz '^FuzzRewrite$$' -fuzztime 30s ./pkg/manifest
	$(GO) test -run '^$$' -fuzz '^FuzzRewriteEmbedded$$' -fuzztime 30s ./pkg/manifest
	$(GO) test -run '^$$' -fuzz '^FuzzOperators$$' -fuzztime 30s ./pkg/manifest
	$(GO) test -run '^$$' -fuzz '^FuzzChartSources$$' -fuzztime 30s ./pkg/manifest
	$(GO) test -run '^$$' -fuzz '^FuzzScalarText$$' -fuzztime 30s ./pkg/manifest
	$(GO) test -run '^$$' -fuzz '^FuzzParseRef$$' -fuzztime 30s ./test/parity
	$(GO) test -run '^$$' -fuzz '^FuzzPolicy$$' -fuzztime 30s ./test/policy

bench-data: ## generate the benchmark corpus under testdata/bench (git-ignored)
	$(GO) run ./internal/benchdata -out testdata/bench

bench: bench-data ## Go benchmarks and the side-by-side comparison with peers
	mkdir -p $(BIN)
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./pkg/... ./pkg/mirror/... ./pkg/krmfn/... ./pkg/helm/... | tee $(BIN)/bench.txt
	./scripts/bench-peers.sh

bench-peers: bench-data ## only the side-by-side comparison with peers (kustomize, kbld, ... when installed)
	./scripts/bench-peers.sh

# Mutation testing (github.com/go-gremlins/gremlins): each mutant of
# pkg/rewrite and pkg/manifest is compiled and tested; efficacy is
# killed / (killed + lived). Slow (about an hour for pkg/manifest on two
# cores), so not part of `test` or CI. The timeout is the coefficient times
# the package's coverage run (-count=1 so that it is not a cached result);
# pkg/rewrite's run is short, so its coefficient is larger. Lived mutants
# and why they live: testdata/mutation/README.md.
GREMLINS_VERSION ?= v0.6.0
GREMLINS_BIN     := $(abspath $(BIN))/tools/gremlins
GREMLINS         ?= $(or $(shell command -v gremlins 2>/dev/null),$(GREMLINS_BIN))
MUTATE_WORKERS   ?= 1

$(GREMLINS_BIN):
	GOBIN=$(abspath $(BIN))/tools $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)

mutate: $(GREMLINS) ## mutation testing of pkg/rewrite and pkg/manifest with gremlins (slow; not in CI; MUTATE_WORKERS=1)
	mkdir -p $(BIN)/mutation
	GOFLAGS=-count=1 $(GREMLINS) unleash --workers $(MUTATE_WORKERS) --timeout-coefficient 20 -o $(BIN)/mutation/rewrite.json ./pkg/rewrite
	GOFLAGS=-count=1 $(GREMLINS) unleash --workers $(MUTATE_WORKERS) --timeout-coefficient 8 -o $(BIN)/mutation/manifest.json ./pkg/manifest

clean: ## remove build output
	rm -rf $(BIN)

print-modules: ## print the directories of the Go modules (for scripts)
	@echo $(MODULES)
