# cluster-api-provider-openshift-assisted
#
# `make test` is the test command (what CI runs); `make help` lists the targets.

SHELL := /usr/bin/env bash -o errexit -o pipefail -o nounset
.DEFAULT_GOAL := help

ROOT := $(abspath .)
PROVIDERS := infrastructure bootstrap controlplane
MODULES := api pkg $(PROVIDERS) test/support test/support/baremetaloperator test

# The module mirror serves the openshift and metal3 modules, but the checksum database does not
# know all of them: go.sum (committed) is what verifies them.
export GONOSUMDB ?= github.com/openshift,github.com/metal3-io,k8s.io/kubernetes

CONTROLLER_GEN = $(shell $(ROOT)/hack/ensure-tool.sh controller-gen)
CONVERSION_GEN = $(shell $(ROOT)/hack/ensure-tool.sh conversion-gen)
KUSTOMIZE = $(shell $(ROOT)/hack/ensure-tool.sh kustomize)

# One version for a release: RELEASE_VERSION (vX.Y.Z on the command line, or else an exact vX.Y.Z
# tag on HEAD) is then also the managers' VERSION, the images' IMAGE_TAG and the version of the
# release manifests and metadata (`make release`). Without one (development), VERSION and IMAGE_TAG
# come from git describe, and release-manifests writes v0.1.0.
RELEASE_TAG = $(shell git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null)
RELEASE_VERSION ?= $(RELEASE_TAG)
VERSION ?= $(or $(RELEASE_VERSION),$(shell git describe --tags --always --dirty 2>/dev/null || echo dev))
LDFLAGS ?= -s -w -X main.version=$(VERSION)
GO_BUILD = CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)"

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9%-]+:.*?##/ { printf "  %-22s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Generate

.PHONY: generate
generate: ## Generate deepcopy and conversion code for the APIs (the api module).
	cd api && $(CONTROLLER_GEN) object:headerFile=$(ROOT)/hack/boilerplate.go.txt paths=./...
	@# The older API versions' conversions (cached by their inputs: see the script).
	@hack/conversion-gen.sh $(CONVERSION_GEN)

.PHONY: manifests
manifests: ## Generate CRDs, RBAC and webhook manifests, and the third-party CRDs for tests.
	@# Each provider's CRDs come from its API package in the api module; its RBAC and webhook
	@# manifests from its own module's markers.
	@for m in $(PROVIDERS); do \
		(cd api && $(CONTROLLER_GEN) crd paths=./$$m/... output:crd:artifacts:config=../$$m/config/crd/bases) && \
		(cd $$m && $(CONTROLLER_GEN) rbac:roleName=manager-role webhook paths=./... \
			output:rbac:artifacts:config=config/rbac \
			output:webhook:artifacts:config=config/webhook); \
	done
	@# The third-party CRDs for the tests and the lab, from the pinned modules (cached by their
	@# inputs: see the script).
	@hack/third-party-crds.sh $(CONTROLLER_GEN)

.PHONY: verify-generated
verify-generated: ## Fail when a generated file is stale (regenerates it).
	hack/verify-generated.sh

##@ Build

.PHONY: build
build: $(addprefix build-,$(PROVIDERS)) build-demo ## Build the three managers and the lab's demo into bin/.

.PHONY: build-demo
build-demo: ## Build the lab's demo (what make demo runs) into bin/.
	cd test && go build -o $(ROOT)/bin/demo ./lab/cmd/demo

.PHONY: build-%
build-%: ## Build one manager (the Dockerfiles run this same target).
	cd $* && $(GO_BUILD) -o $(ROOT)/bin/$*-manager .

# FIPS variant (Dockerfile.fips, docs/security.md): Red Hat's Go toolset calls the system's OpenSSL
# through cgo; strictfipsruntime makes the binary refuse to run unless that OpenSSL is in FIPS mode.
# Upstream Go does not know the experiment, so build-fips refuses it (GOTOOLCHAIN=local: never a
# downloaded upstream Go either) rather than build a binary falsely called FIPS.
FIPS_GO_BUILD = CGO_ENABLED=1 GOEXPERIMENT=strictfipsruntime GOTOOLCHAIN=local go build -tags strictfipsruntime -trimpath -ldflags "$(LDFLAGS)"

.PHONY: build-fips
build-fips: $(addprefix build-fips-,$(PROVIDERS)) ## Build the three managers for FIPS mode into bin/*-manager-fips (needs Red Hat's Go toolset: Dockerfile.fips).

.PHONY: build-fips-%
build-fips-%: ## Build one manager for FIPS mode (Dockerfile.fips runs this same target).
	@GOEXPERIMENT=strictfipsruntime GOTOOLCHAIN=local go env GOEXPERIMENT >/dev/null 2>&1 || { \
		echo "build-fips: $$(go version) is not Red Hat's Go toolset: it does not know GOEXPERIMENT=strictfipsruntime, so its binaries" \
			"use Go's own cryptography and cannot run FIPS-validated. Build in registry.access.redhat.com/ubi9/go-toolset" \
			"(make docker-build-fips-$*), or with the golang-fips toolchain of RHEL's go-toolset package." >&2; exit 1; }
	cd $* && $(FIPS_GO_BUILD) -o $(ROOT)/bin/$*-manager-fips .
	@hack/verify-fips-binary.sh bin/$*-manager-fips || { rm -f bin/$*-manager-fips; exit 1; }

IMAGE_REGISTRY ?= quay.io/openshift-assisted
IMAGE_TAG ?= $(VERSION)
DOCKERFILE_infrastructure := Dockerfile.infra
DOCKERFILE_bootstrap := Dockerfile.bootstrap
DOCKERFILE_controlplane := Dockerfile.controlplane

.PHONY: docker-build
docker-build: $(addprefix docker-build-,$(PROVIDERS)) ## Build the three images (needs a Docker engine).

.PHONY: docker-build-%
docker-build-%:
	docker build -f $(DOCKERFILE_$*) --build-arg VERSION=$(VERSION) -t $(IMAGE_REGISTRY)/capoa-$*:$(IMAGE_TAG) .

.PHONY: docker-build-fips
docker-build-fips: $(addprefix docker-build-fips-,$(PROVIDERS)) ## Build the three FIPS images, capoa-<provider>:<tag>-fips, from Dockerfile.fips (needs a Docker engine).

.PHONY: docker-build-fips-%
docker-build-fips-%:
	docker build -f Dockerfile.fips --build-arg PROVIDER=$* --build-arg VERSION=$(VERSION) -t $(IMAGE_REGISTRY)/capoa-$*:$(IMAGE_TAG)-fips .

.PHONY: docker-push
docker-push: $(addprefix docker-push-,$(PROVIDERS)) ## Push the three images docker-build tagged (IMAGE_REGISTRY, IMAGE_TAG).

.PHONY: docker-push-%
docker-push-%:
	docker push $(IMAGE_REGISTRY)/capoa-$*:$(IMAGE_TAG)

# The platforms of a release's images (docker-buildx) and binaries (release): space- or comma-separated.
PLATFORMS ?= linux/amd64 linux/arm64
comma := ,
empty :=
space := $(empty) $(empty)
PUSH ?= false

.PHONY: docker-buildx
docker-buildx: $(addprefix docker-buildx-,$(PROVIDERS)) ## Build the three images for PLATFORMS with buildx (PUSH=true pushes them; what the release workflow does).

.PHONY: docker-buildx-fips
docker-buildx-fips: $(addprefix docker-buildx-fips-,$(PROVIDERS)) ## Build the three FIPS images for PLATFORMS with buildx, natively emulated (PUSH=true pushes them).

.PHONY: docker-buildx-fips-%
docker-buildx-fips-%:
	docker buildx build --platform $(subst $(space),$(comma),$(strip $(subst $(comma),$(space),$(PLATFORMS)))) \
		-f Dockerfile.fips --build-arg PROVIDER=$* --build-arg VERSION=$(VERSION) -t $(IMAGE_REGISTRY)/capoa-$*:$(IMAGE_TAG)-fips \
		$(if $(filter true,$(PUSH)),--push) .

.PHONY: docker-buildx-%
docker-buildx-%:
	docker buildx build --platform $(subst $(space),$(comma),$(strip $(subst $(comma),$(space),$(PLATFORMS)))) \
		-f $(DOCKERFILE_$*) --build-arg VERSION=$(VERSION) -t $(IMAGE_REGISTRY)/capoa-$*:$(IMAGE_TAG) \
		$(if $(filter true,$(PUSH)),--push) .

.PHONY: verify-dockerfiles
verify-dockerfiles: ## Check that each Dockerfile builds with the Makefile's own build target, for buildx's target platform, with the VERSION build arg (and Dockerfile.fips with build-fips).
	@$(foreach m,$(PROVIDERS),\
		grep -q "make build-$(m) " $(DOCKERFILE_$(m)) || { echo "$(DOCKERFILE_$(m)) does not run make build-$(m)" >&2; exit 1; }; \
		grep -q '^FROM --platform=$$BUILDPLATFORM golang' $(DOCKERFILE_$(m)) && grep -q '^ARG TARGETOS TARGETARCH$$' $(DOCKERFILE_$(m)) && \
			grep -qF 'GOOS=$${TARGETOS} GOARCH=$${TARGETARCH} make build-$(m) VERSION=$${VERSION}' $(DOCKERFILE_$(m)) && grep -q '^ARG VERSION=' $(DOCKERFILE_$(m)) || \
			{ echo "$(DOCKERFILE_$(m)) does not cross-compile make build-$(m) for TARGETOS/TARGETARCH with ARG VERSION (docker-buildx, the release workflow)" >&2; exit 1; }; \
		grep -q "^USER 65532" $(DOCKERFILE_$(m)) || { echo "$(DOCKERFILE_$(m)) does not run as non-root" >&2; exit 1; };)
	@# The FIPS variant: one Dockerfile for the three providers, building with make build-fips-<provider>
	@# on Red Hat's Go toolset, never the local toolchain's fallback, onto a UBI base, as non-root.
	@grep -qF 'make build-fips-$${PROVIDER} VERSION=$${VERSION}' Dockerfile.fips && grep -q '^ARG PROVIDER$$' Dockerfile.fips && \
		grep -q '^ARG VERSION=' Dockerfile.fips && grep -q '^ARG GO_TOOLSET_IMAGE=registry.access.redhat.com/ubi9/go-toolset:' Dockerfile.fips && \
		grep -q '^ARG RUNTIME_IMAGE=registry.access.redhat.com/ubi9/ubi-minimal:' Dockerfile.fips && grep -q 'GOTOOLCHAIN=local' Dockerfile.fips && \
		grep -q "^USER 65532" Dockerfile.fips && ! grep -q -- '--platform=' Dockerfile.fips || \
		{ echo "Dockerfile.fips does not build make build-fips-<PROVIDER> with ARG VERSION on ubi9/go-toolset (GOTOOLCHAIN=local, no cross-compiling) onto ubi9/ubi-minimal as non-root" >&2; exit 1; }

.PHONY: verify-workflows
verify-workflows: ## actionlint on .github/workflows, and the release workflow's images, Dockerfiles, platforms and build args against the Makefile's.
	hack/verify-workflows.sh

.PHONY: build-all-modules
build-all-modules: ## go build ./... in every module, with go.work and with GOWORK=off.
	@for m in $(MODULES); do \
		echo "go build ($$m)"; (cd $$m && go build ./... && GOWORK=off go build ./...); \
	done

##@ Test

# Per test binary (go test's -timeout) and for the system suite (ginkgo's --timeout).
export TEST_TIMEOUT ?= 30m

.PHONY: verify-fmt
verify-fmt: ## Fail when a Go file is not gofmt-clean.
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "Not gofmt-clean (run gofmt -w):" >&2; echo "$$out" >&2; exit 1; fi

LINT_ARGS ?=

.PHONY: lint
lint: ## golangci-lint (.golangci.yml) in every module and the Kube API Linter (.golangci-kal.yml) on the API types; LINT_ARGS=--fix to apply fixes.
	hack/lint.sh $(LINT_ARGS)

.PHONY: verify-tidy
verify-tidy: ## Fail when a module's go.mod or go.sum is not what go mod tidy writes (go mod tidy in that module fixes it).
	@rc=0; for m in $(MODULES); do out=$$(cd $$m && go mod tidy -diff 2>&1) || { echo "$$m: go.mod or go.sum is not tidy (cd $$m && go mod tidy):" >&2; echo "$$out" >&2; rc=1; }; done; exit $$rc

.PHONY: verify-layout
verify-layout: ## Fail when a module boundary is crossed (api imports controller-runtime, a provider requires another, production code imports test code).
	hack/verify-layout.sh

.PHONY: verify-doc-paths
verify-doc-paths: ## Fail when a Markdown file names a path of this repository that does not exist (a link, or a `code span` such as `controlplane/internal/etcd`).
	hack/verify-doc-paths.sh

.PHONY: vet
vet: ## go vet every module, with go.work and with GOWORK=off.
	@for m in $(MODULES); do echo "go vet ($$m)"; (cd $$m && go vet ./... && GOWORK=off go vet ./...); done

.PHONY: envtest
envtest: ## Build (once, cached outside the repo) the kube-apiserver and etcd the tests run.
	@hack/ensure-envtest.sh >/dev/null

.PHONY: test
test: ## The test command (what CI runs): test-unit's checks, the Dockerfile and workflow checks, the build and vet; then every module's tests, then the lab suites; ends with the time table.
	hack/test.sh full

.PHONY: test-unit
test-unit: ## The inner loop: generated files, gofmt, layout, lint, and every module's unit and envtest tests, without the lab suites.
	hack/test.sh unit

.PHONY: test-lab
test-lab: ## The lab suites alone: system (SYSTEM_PROCS Ginkgo processes; SYSTEM_ARGS='--focus=...'), clusterctl, Operator, RBAC, release, lab, fleet smoke and e2e smoke.
	hack/test.sh lab

BENCH_POOLS ?= 2000 10000
BENCH_MACHINES ?= 500
BENCH_ARGS ?=
FLEET_CLUSTERS ?= 50 200 500 1000

.PHONY: bench
bench: envtest ## Benchmarks, not part of make test: BENCH_MACHINES (500) AgentMachines bound from pools of BENCH_POOLS (2000 10000) Agents by the infrastructure manager's binary at its default flags (BENCH_ARGS adds some), then fleets of FLEET_CLUSTERS (50 200 500 1000) single-node clusters through the three providers; prints the bind and fleet tables, and the top entries of the CPU and heap profiles of the manager of each bind and of each provider of each fleet, and of the API server of each bind (kept in _artifacts/bench).
	@export KUBEBUILDER_ASSETS="$$(hack/ensure-envtest.sh)"; \
	sockets="$$(mktemp -d)"; trap 'rm -rf "$$sockets"' EXIT; \
	for n in $(BENCH_POOLS); do \
		(cd infrastructure && CAPOA_APISERVER_PROFILE_DIR="$$sockets" BENCH_AGENTS=$$n BENCH_MACHINES=$(BENCH_MACHINES) BENCH_ARGS="$(BENCH_ARGS)" BENCH_PROFILES="$(CURDIR)/_artifacts/bench" \
			go test -count=1 -timeout 60m -run '^$$' -bench '^BenchmarkBind$$' -benchtime 1x ./internal/controllers/ 2>&1 | \
			grep -Ev '^[IWE][0-9]{4} ') || exit 1; \
	done; \
	(cd test && FLEET_CLUSTERS="$(FLEET_CLUSTERS)" FLEET_PROFILES="$(CURDIR)/_artifacts/bench" go test -count=1 -timeout 4h -run '^$$' -bench '^BenchmarkFleet$$' -benchtime 1x ./fleet/ 2>&1 | \
		grep -Ev '^[IWE][0-9]{4} ')

E2E_ARGS ?=

.PHONY: test-e2e
test-e2e: envtest ## The e2e suite (test/e2e) on the simulated lab, every spec (make test runs its smoke subset); E2E_ARGS='-ginkgo.focus=...'.
	@export KUBEBUILDER_ASSETS="$$(hack/ensure-envtest.sh)"; \
	cd test && E2E_FULL=true go test -v -count=1 -timeout 60m ./e2e/ -args -ginkgo.v $(E2E_ARGS)

.PHONY: e2e-kind
e2e-kind: ## The same e2e suite on kind with Metal3/Ironic, assisted-service, Hive and sushy-tools VMs (needs Docker, libvirt, PULL_SECRET_FILE).
	test/e2e/kind/run.sh all

##@ Release

RELEASE_DIR ?= $(ROOT)/out
# The version release-manifests writes: RELEASE_VERSION, or v0.1.0 in development (no version given,
# HEAD not tagged).
MANIFESTS_VERSION = $(or $(RELEASE_VERSION),v0.1.0)

.PHONY: release
release: ## Everything a release carries, into out/, with RELEASE_VERSION (or HEAD's exact tag) throughout: the managers for PLATFORMS (out/bin/), the manifests and the operator ConfigMaps; then hack/verify-release.sh checks it.
	@hack/release-version.sh "$(RELEASE_VERSION)"
	@[[ "$(VERSION)" == "$(RELEASE_VERSION)" && "$(IMAGE_TAG)" == "$(RELEASE_VERSION)" ]] || { \
		echo "release: VERSION ($(VERSION)) and IMAGE_TAG ($(IMAGE_TAG)) must be RELEASE_VERSION ($(RELEASE_VERSION)), one version throughout: leave them unset" >&2; exit 1; }
	rm -rf $(RELEASE_DIR)/bin
	@$(MAKE) --no-print-directory release-binaries operator-configmaps \
		RELEASE_VERSION=$(RELEASE_VERSION) VERSION=$(RELEASE_VERSION) IMAGE_TAG=$(RELEASE_VERSION)
	IMAGE_REGISTRY=$(IMAGE_REGISTRY) RELEASE_PLATFORMS="$(PLATFORMS)" hack/verify-release.sh $(RELEASE_DIR) $(RELEASE_VERSION)

.PHONY: release-binaries
release-binaries: ## Build the three managers for every PLATFORMS entry into out/bin/<provider>-manager-<os>-<arch>, with VERSION.
	@for p in $(PROVIDERS); do for platform in $(subst $(comma),$(space),$(PLATFORMS)); do \
		os="$${platform%/*}" arch="$${platform#*/}"; echo "go build $$p-manager-$$os-$$arch (version $(VERSION))"; \
		(cd $$p && GOOS="$$os" GOARCH="$$arch" $(GO_BUILD) -o $(RELEASE_DIR)/bin/$$p-manager-$$os-$$arch .) || exit 1; \
	done; done

.PHONY: release-manifests
release-manifests: ## Write the components, metadata.yaml, templates and a local clusterctl repository into out/ (RELEASE_VERSION, v0.1.0 without one).
	RELEASE_VERSION=$(MANIFESTS_VERSION) IMAGE_REGISTRY=$(IMAGE_REGISTRY) IMAGE_TAG=$(MANIFESTS_VERSION) \
		KUSTOMIZE=$(KUSTOMIZE) hack/release-manifests.sh $(RELEASE_DIR)

.PHONY: operator-configmaps
operator-configmaps: release-manifests ## Write the Cluster API Operator's provider ConfigMaps into out/operator/.
	KUSTOMIZE=$(KUSTOMIZE) hack/operator-configmaps.sh $(RELEASE_DIR)

.PHONY: cluster-examples
cluster-examples: ## Render examples/clusters/ from templates/ (clusterctl generate cluster --from).
	hack/render-examples.sh

.PHONY: api-reference
api-reference: ## Generate docs/api-reference/ from the API types (crd-ref-docs).
	hack/gen-api-reference.sh

##@ Demo

FLAVOR ?= multinode
SPEED ?= fast
KEEP ?= false
DEMO_TIMEOUT ?= 15m
HOSTS ?= 0
NEWEST_CRDS ?= false
LAB ?=

.PHONY: demo
demo: envtest ## The main job: the lab creates an OpenShift cluster on the real assisted-service and baremetal-operator, printing their versions and the management kubeconfig first (FLAVOR=multinode|image|disconnected|sno|agent|agent-sno, SPEED=fast|realistic, KEEP=true, HOSTS=n spare hosts, LAB=real|sim: the real components or their simulators, by default the flavor's (sim for disconnected), NEWEST_CRDS=true: the newest assisted-service and Hive CRDs, on the simulators).
	@export KUBEBUILDER_ASSETS="$$(hack/ensure-envtest.sh)"; \
	cd test && go run ./lab/cmd/demo --flavor=$(FLAVOR) --speed=$(SPEED) --keep=$(KEEP) --hosts=$(HOSTS) \
		--newest-crds=$(NEWEST_CRDS) --lab=$(LAB) --timeout=$(DEMO_TIMEOUT) --out=$(ROOT)/_artifacts/demo

.PHONY: clean
clean: ## Remove build outputs.
	rm -rf bin
