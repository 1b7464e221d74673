# rehost — make targets. Run `make help` for the list.
GO      ?= go
GOTEST  ?= $(GO) test
BIN     ?= bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# The Go modules of this repository (go.work ties them together). The core
# (.: pkg/rewrite, pkg/manifest, pkg/rendered) requires only a YAML parser
# and says go 1.22, so that programs such as sealer can import it as they
# are; each heavy dependency lives in a module of its own: kyaml (pkg/krmfn,
# cmd/rehost-fn), go-containerregistry (pkg/mirror), Helm (pkg/helm,
# cmd/rehost-helm), cobra (the commands); the test modules link what only
# tests need (real binaries, ggcr's parser, Helm 4, sealer's Helm 3.9, the API server's
# admission plugins, every module for the documentation's programs). docs/modules.md.
MODULES  := . pkg/mirror pkg/krmfn pkg/helm cmd/rehost cmd/rehost-fn cmd/rehost-helm test/docs test/e2e test/helm4compat test/helm39 test/parity test/policy tools/release test/release
# SOLO modules are outside go.work: they are vetted and tested with
# GOWORK=off. test/helm39 pins older versions of dependencies than the
# workspace's build list selects (sealer's Helm 3.9.4, where go.work selects
# pkg/helm's 3.22); tools/release and test/release, the release tooling and
# the checks of a release directory (make release-verify; without one its
# tests skip), import no rehost module.
SOLO     := test/helm39 tools/release test/release
PACKAGES := ./... $(foreach m,$(filter-out . $(SOLO),$(MODULES)),./$(m)/...)
BINARIES := ./cmd/rehost ./cmd/rehost-fn ./cmd/rehost-helm

.PHONY: help build test e2e lint modules fuzz bench bench-data bench-peers bench-archive-memory mutate clean print-modules
.PHONY: release release-snapshot release-artifacts release-binaries release-prep release-check release-tags release-verify

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

bench: bench-data ## Go benchmarks, rehost images/rewrite of a 5,000- and 20,000-document chart against helm template, and the side-by-side comparison with peers
	mkdir -p $(BIN)
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./pkg/... ./pkg/mirror/... ./pkg/krmfn/... ./pkg/helm/... | tee $(BIN)/bench.txt
	$(GO) test -run '^$$' -bench ChartCLIScaling -benchtime 3x -count 1 ./test/e2e | tee -a $(BIN)/bench.txt
	./scripts/bench-peers.sh

bench-peers: bench-data ## only the side-by-side comparison with peers (kustomize, kbld, ... when installed)
	./scripts/bench-peers.sh

# The real binary against the real registry: 2 GiB of images through
# --to-oci, --to-archive --part-size 100MB, --from-oci and --from-archive,
# with each run's peak RSS and time. Needs about 10 GiB of disk for a
# while (removed at the end); not part of `test`.
ARCHIVE_MEMORY_MIB ?= 2048
bench-archive-memory: ## peak RSS of mirror --to-archive/--from-archive on 2 GiB of images (real registry; ~10 GiB of disk)
	cd test/e2e && REHOST_ARCHIVE_MEMORY=$(ARCHIVE_MEMORY_MIB) $(GO) test -count=1 -timeout 60m -run '^TestArchiveMemory$$' -v .

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

# Releases (docs/release.md). One version for the repository; each
# released module is tagged with its directory as prefix, as kustomize tags
# its modules: v0.1.0 (the core), pkg/mirror/v0.1.0, ..., cmd/rehost/v0.1.0.
# Test and tool modules are not released. Binaries are built as `go install
# module@version` builds them: in their own module (GOWORK=off), with
# -trimpath, CGO_ENABLED=0, no VCS stamp and the commit's time, so that two
# builds of a commit give the same bytes; archives have fixed owners, times
# and order. A tree in the release state (no replace lines) gets the rehost
# modules from a module proxy directory made from it (tools/release).
RELEASED  := . pkg/mirror pkg/krmfn pkg/helm cmd/rehost cmd/rehost-fn cmd/rehost-helm
DIST      ?= dist
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
COMMANDS  := rehost rehost-fn rehost-helm
# The commands with a container image (linux/amd64 and linux/arm64, from
# the binaries of TARGETS): the KRM function, and rehost for mirror jobs.
IMAGES    := rehost-fn rehost
# OS/ARCH/COMMAND of each binary: every command on every platform by default.
TARGETS   ?= $(foreach p,$(PLATFORMS),$(foreach c,$(COMMANDS),$(p)/$(c)))
SOURCE    ?= https://github.com/rehost/rehost
EPOCH      = $(shell git log -1 --format=%ct)
SNAPSHOT_VERSION = v0.0.0-snapshot.g$(shell git rev-parse --short=12 HEAD)$(if $(shell git status --porcelain),.dirty)
COSIGN_KEY ?=
COSIGN_PUB ?=
COSIGN    ?= cosign
RELEASE_TOOL := $(abspath $(BIN))/tools/release
CYCLONEDX_VERSION ?= v1.10.0
CYCLONEDX_BIN := $(abspath $(BIN))/tools/cyclonedx-gomod
CYCLONEDX ?= $(or $(shell command -v cyclonedx-gomod 2>/dev/null),$(CYCLONEDX_BIN))
DISTABS    = $(abspath $(DIST))
# The targets that take a release version refuse to guess it, before
# building anything.
ifneq ($(filter release release-prep release-check release-tags release-artifacts release-binaries,$(MAKECMDGOALS)),)
ifeq ($(filter command line environment override,$(origin VERSION)),)
$(error make $(filter release%,$(MAKECMDGOALS)): give the release version: VERSION=vX.Y.Z (make release-snapshot builds without one))
endif
endif

$(RELEASE_TOOL): tools/release/go.mod tools/release/go.sum $(wildcard tools/release/*.go)
	@cd tools/release && GOWORK=off $(GO) build -trimpath -o $(RELEASE_TOOL) .

$(CYCLONEDX_BIN):
	GOBIN=$(abspath $(BIN))/tools $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_VERSION)

release-prep: $(RELEASE_TOOL) ## write the release state of VERSION=vX.Y.Z: the released modules require each other at VERSION, no replace lines, go.sum updated
	$(RELEASE_TOOL) prep -version $(VERSION) -released "$(RELEASED)"

release-check: $(RELEASE_TOOL) ## verify the release state of VERSION=vX.Y.Z: requirements, no replace, tidy; a require-only consumer and go install cmd/rehost@VERSION from a module proxy directory
	$(RELEASE_TOOL) check -version $(VERSION) -released "$(RELEASED)"

release-tags: $(RELEASE_TOOL) ## print the git tags of VERSION=vX.Y.Z, one per released module
	@$(RELEASE_TOOL) tags -version $(VERSION) -released "$(RELEASED)"

release: ## build release VERSION=vX.Y.Z (COSIGN_KEY=KEY) from a clean tree in its release state into DIST
	@if [ -n "$$(git status --porcelain)" ]; then \
	  echo "make release: the tree has uncommitted changes; a release is built from a commit (make release-snapshot builds the tree as it is):"; \
	  git status --short | head -20; exit 1; fi
	@test -n "$(COSIGN_KEY)" || { echo "make release: give the signing key: COSIGN_KEY=cosign.key (its password in COSIGN_PASSWORD)"; exit 1; }
	$(MAKE) --no-print-directory release-check VERSION=$(VERSION)
	$(MAKE) --no-print-directory release-artifacts VERSION=$(VERSION)

release-snapshot: ## build the release of this tree as it is (v0.0.0-snapshot.gCOMMIT) into DIST; signed with COSIGN_KEY if given; PLATFORMS or TARGETS build fewer
	$(MAKE) --no-print-directory release-artifacts VERSION=$(SNAPSHOT_VERSION)

release-artifacts: $(RELEASE_TOOL) $(CYCLONEDX) ## (of release, release-snapshot) binaries, archives, SBOMs, Helm plugin, rehost-fn and rehost images, checksums.txt and its signature into DIST
	rm -rf $(DIST)/bin $(DIST)/.stage $(addprefix $(DIST)/,$(addsuffix -image,$(IMAGES)))
	rm -f $(DIST)/*.tar.gz $(DIST)/*.zip $(DIST)/*.tgz $(DIST)/*.cdx.json $(DIST)/*.txt $(DIST)/*.sigstore.json
	$(MAKE) --no-print-directory release-binaries VERSION=$(VERSION)
	@set -e; cd $(DIST); for d in bin/*_*; do for f in $$d/*; do \
	  b=$${f##*/}; n=$${b%.exe}_$(VERSION)_$${d#bin/}; touch -d @$(EPOCH) $$f; \
	  case $$b in \
	  *.exe) n=$$n.zip; (cd $$d && TZ=UTC zip -q -X -D ../../$$n $$b);; \
	  *) tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(EPOCH) --format=ustar -C $$d -cf $$n.tar $$b; \
	     gzip -9 -n $$n.tar; n=$$n.tar.gz;; \
	  esac; \
	  p=$${d#bin/}; GOOS=$${p%_*} GOARCH=$${p#*_} $(CYCLONEDX) bin -json -noserial -notimestamp -version $(VERSION) -output $$n.sbom.cdx.json $$f; \
	  echo "release: $$n and $$n.sbom.cdx.json"; done; done
	@set -e; p=$(DIST)/.stage/plugin/rehost; mkdir -p $$p; cp -R helm-plugin/rehost/. $$p/; \
	  sed 's/^version: .*/version: $(patsubst v%,%,$(VERSION))/' helm-plugin/rehost/plugin.yaml > $$p/plugin.yaml; \
	  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(EPOCH) --format=ustar -C $(DIST)/.stage/plugin -cf $(DIST)/.stage/plugin.tar rehost; \
	  gzip -9 -n -c $(DIST)/.stage/plugin.tar > $(DIST)/rehost-$(patsubst v%,%,$(VERSION)).tgz; \
	  echo "release: rehost-$(patsubst v%,%,$(VERSION)).tgz (Helm 4 plugin)"
	@set -e; for c in $(IMAGES); do bins=; for p in linux_amd64 linux_arm64; do \
	  [ ! -f $(DIST)/bin/$$p/$$c ] || bins="$$bins -binary $$(echo $$p | tr _ /)=$(DIST)/bin/$$p/$$c"; done; \
	  if [ -n "$$bins" ]; then \
	  d=$$($(RELEASE_TOOL) image -command $$c -version $(VERSION) -revision $(COMMIT) -created $(EPOCH) -source $(SOURCE) $$bins -layout $(DIST)/$$c-image); \
	  echo "$${d##*@}" > $(DIST)/$${c}_$(VERSION)_image-digest.txt; \
	  echo "release: $$c-image/ (OCI layout of the $$c image, $${d##*@})"; fi; done
	cd $(DIST) && LC_ALL=C ls | grep -E '[.](tar[.]gz|zip|tgz|cdx[.]json)$$|_image-digest[.]txt$$' | xargs sha256sum > checksums.txt
	@set -e; if [ -n "$(COSIGN_KEY)" ]; then \
	  $(COSIGN) sign-blob --key $(COSIGN_KEY) --signing-config tools/release/signing-config.json \
	    --bundle $(DIST)/checksums.txt.sigstore.json -y $(DIST)/checksums.txt > $(DIST)/.stage/cosign.log 2>&1 \
	    || { cat $(DIST)/.stage/cosign.log; exit 1; }; \
	  chmod 644 $(DIST)/checksums.txt.sigstore.json; echo "release: checksums.txt.sigstore.json (cosign, offline: no transparency log)"; \
	else echo "release: checksums.txt not signed (no COSIGN_KEY)"; fi
	rm -rf $(DIST)/bin $(DIST)/.stage $(DIST)/.proxy
	@if [ -d $(DIST)/.modcache ]; then chmod -R u+w $(DIST)/.modcache && rm -rf $(DIST)/.modcache; fi
	@cd $(DIST) && ls -l | sed 1d

release-binaries: $(RELEASE_TOOL) ## (of release-artifacts) build TARGETS (OS/ARCH/COMMAND) into DIST/bin/OS_ARCH/
	@set -e; \
	if ! grep -qs '^replace' $(addsuffix /go.mod,$(filter cmd/%,$(RELEASED))); then \
	  $(RELEASE_TOOL) proxy -out $(DISTABS)/.proxy -released "$(RELEASED)"; \
	  export GOPROXY="file://$(DISTABS)/.proxy,file://$$($(GO) env GOMODCACHE)/cache/download,$$($(GO) env GOPROXY)" \
	    GOMODCACHE=$(DISTABS)/.modcache GONOSUMDB=github.com/rehost/rehost GOFLAGS="$$GOFLAGS -modcacherw"; \
	  echo "release: the release state: the rehost modules come from $(DIST)/.proxy, made from this tree"; fi; \
	for t in $(TARGETS); do \
	  os=$${t%%/*}; a=$${t#*/}; arch=$${a%%/*}; cmd=$${a#*/}; start=$$(date +%s); \
	  (cd cmd/$$cmd && GOWORK=off CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOAMD64=v1 GOARM64=v8.0 \
	    $(GO) build -trimpath -buildvcs=false -ldflags '-s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)' \
	    -o $(DISTABS)/bin/$${os}_$${arch}/ .); \
	  echo "release: $$cmd $$os/$$arch ($$(( $$(date +%s) - start ))s)"; done

# The targets release-verify rebuilds with an empty build cache and compares.
REPRO ?= linux/arm64/rehost-fn

release-verify: ## check DIST: checksums, signature (COSIGN_PUB=KEY), SBOMs, archives, REPRO rebuilt identical, the image in a loopback registry, the plugin in Helm 4 (test/release)
	cd test/release && GOWORK=off $(GO) test -count=1 -timeout 30m -v . -args -dist $(DISTABS) -repro "$(REPRO)" -cosign-pub "$(if $(COSIGN_PUB),$(abspath $(COSIGN_PUB)))"

clean: ## remove build output
	rm -rf $(BIN)
	@if [ -d $(DIST)/.modcache ]; then chmod -R u+w $(DIST)/.modcache; fi
	rm -rf $(DIST)

print-modules: ## print the directories of the Go modules (for scripts)
	@echo $(MODULES)
