#!/usr/bin/env bash
# ensure-assisted-service.sh: make sure the real assisted-service (the lab's hub, issue 43) is built
# at the pinned commit, with its own CRDs beside it, and print the absolute folder holding them on
# stdout:
#
#   dir="$(hack/ensure-assisted-service.sh)"
#   # ${dir}/assisted-service, ${dir}/crds/*.yaml, ${dir}/hw-requirements.json, ${dir}/rbac/*.yaml
#
# The binary is assisted-service's server (github.com/openshift/assisted-service/cmd) built from the
# Go module mirror, as docs/research/real-components.md found it builds here: a throwaway module that
# requires the root module at ASSISTED_SERVICE_VERSION and copies upstream's replace block (its
# ./api, ./client and ./models become the published modules of the same commit), plus two stand-ins
# for modules the mirror cannot give:
#   - vbom.ml/util: named by an old library-go go.mod only; nothing imports it (an empty module).
#   - github.com/nmstate/nmstate/rust/src/go/nmstate: a cgo binding to libnmstate, which no Debian
#     package here ships. The stand-in's GenerateConfiguration fails, as the service fails without
#     nmstatectl: only static networking (NMStateConfig) needs it, and it cannot go through the real
#     service here.
# Cold: ~65 s to resolve and ~140 s to compile on 2 cores; warm: instant (a stamp names the version).
# Cached outside the repo, keyed by version:
#   ${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capoa}/assisted-service/<version>/
# All progress output goes to stderr; stdout carries only the folder path.
set -euo pipefail

# The one place the lab's assisted-service is pinned: the newest root pseudo-version the mirror
# serves (2024-05-31, two days after the api and models the providers pin).
ASSISTED_SERVICE_VERSION="${ASSISTED_SERVICE_VERSION:-v1.0.10-0.20240531185134-780deffb6a35}"

log() { printf 'ensure-assisted-service: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ "${ASSISTED_SERVICE_VERSION}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+-0\.([0-9]{14})-([0-9a-f]{12})$ ]] \
  || die "ASSISTED_SERVICE_VERSION must be a root pseudo-version (vX.Y.Z-0.<time>-<commit>), got '${ASSISTED_SERVICE_VERSION}'"
# The api, models and client modules of the same commit.
sub_version="v0.0.0-${BASH_REMATCH[1]}-${BASH_REMATCH[2]}"

cache_root="${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/capoa}"
dest="${cache_root}/assisted-service/${ASSISTED_SERVICE_VERSION}"
stamp="${ASSISTED_SERVICE_VERSION} crds hw-requirements rbac"

ready() {
  [[ -x "${dest}/assisted-service" && -f "${dest}/.ready" && "$(cat "${dest}/.ready")" == "${stamp}" ]] \
    && compgen -G "${dest}/crds/*.yaml" >/dev/null && [[ -f "${dest}/hw-requirements.json" && -f "${dest}/rbac/role.yaml" ]]
}

if ready; then
  (cd "${dest}" && pwd -P)
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to build assisted-service"
command -v flock >/dev/null 2>&1 || die "flock is not on PATH (package util-linux)"
mkdir -p "${dest}" || die "cannot create cache folder ${dest}"
dest="$(cd "${dest}" && pwd -P)"

# One builder per version folder: a second caller waits, then finds the binary.
exec 9>"${dest}/.lock"
if ! flock -n 9; then
  log "another process is preparing ${dest}; waiting for its lock..."
  flock 9
fi
if ready; then
  printf '%s\n' "${dest}"
  exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/capoa-assisted-service.XXXXXX")"
trap 'rm -rf -- "${work}"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export GOWORK=off
export GOFLAGS=-mod=mod
export GONOSUMDB="github.com/openshift,github.com/metal3-io${GONOSUMDB:+,${GONOSUMDB}}"
export CGO_ENABLED=0

cd "${work}"
root="github.com/openshift/assisted-service"
src="$(go mod download -json "${root}@${ASSISTED_SERVICE_VERSION}" | sed -nE 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')" \
  || die "cannot fetch ${root}@${ASSISTED_SERVICE_VERSION} through GOPROXY=$(go env GOPROXY)"
[[ -n "${src}" && -f "${src}/go.mod" ]] || die "no source of ${root}@${ASSISTED_SERVICE_VERSION} in the module cache"

mkdir -p standin/vbom standin/nmstate
printf 'module vbom.ml/util\n\ngo 1.20\n' >standin/vbom/go.mod
printf 'module github.com/nmstate/nmstate/rust/src/go/nmstate\n\ngo 1.20\n' >standin/nmstate/go.mod
cat >standin/nmstate/nmstate.go <<'GO'
// Package nmstate stands in for nmstate's cgo binding (libnmstate is not packaged here): the
// assisted-service built with it refuses static network configuration, as one without nmstatectl.
package nmstate

import "errors"

// Nmstate is the binding's handle.
type Nmstate struct{}

// New returns a handle.
func New(...func(*Nmstate)) *Nmstate { return &Nmstate{} }

// GenerateConfiguration fails: libnmstate is not available.
func (*Nmstate) GenerateConfiguration(string) (string, error) {
	return "", errors.New("nmstate GenerateConfiguration: libnmstate is not available in this lab (stand-in)")
}
GO

{
  echo "module capoa.local/assisted-service"
  echo
  grep -E '^go[[:space:]]' "${src}/go.mod"
  echo
  echo "require ${root} ${ASSISTED_SERVICE_VERSION}"
  echo
  echo "replace ("
  # Upstream's replace block, its local modules pinned to the same commit's published ones.
  sed -n '/^replace (/,/^)/p' "${src}/go.mod" | sed '1d;$d' \
    | sed -E "s#=> \./(api|client|models)\$#=> ${root}/\1 ${sub_version}#" \
    | grep -v '=> \./'
  echo "	${root}/api => ${root}/api ${sub_version}"
  echo "	${root}/models => ${root}/models ${sub_version}"
  echo "	${root}/client => ${root}/client ${sub_version}"
  echo "	vbom.ml/util => ./standin/vbom"
  echo "	github.com/nmstate/nmstate/rust/src/go/nmstate => ./standin/nmstate"
  echo ")"
} >go.mod
# The same replace may now appear twice (upstream's and ours): keep the first.
awk '!seen[$0]++' go.mod >go.mod.new && mv go.mod.new go.mod

log "resolving ${root}/cmd@${ASSISTED_SERVICE_VERSION} (cold: about a minute)..."
go get "${root}/cmd@${ASSISTED_SERVICE_VERSION}" >&2 || die "go get ${root}/cmd@${ASSISTED_SERVICE_VERSION} failed (see above)"
log "compiling assisted-service (cold: about 2-3 minutes on 2 cores)..."
go build -trimpath -ldflags "-s -w" -o "${dest}/.assisted-service.tmp.$$" "${root}/cmd" >&2 \
  || { rm -f "${dest}/.assisted-service.tmp.$$"; die "go build ${root}/cmd@${ASSISTED_SERVICE_VERSION} failed (see above)"; }
mv -f "${dest}/.assisted-service.tmp.$$" "${dest}/assisted-service"

# The service's own CRDs at that commit: its agent-install kinds and AgentClusterInstall, and the
# Hive and metal3 CRDs its repository carries for running it (hack/crds).
rm -rf "${dest}/crds"
mkdir -p "${dest}/crds"
cp "${src}"/config/crd/bases/*.yaml "${src}"/hack/crds/*.yaml "${dest}/crds/"
# The hardware requirements its operator deploys it with (AgentServiceConfig's
# HW_VALIDATOR_REQUIREMENTS): what a hub's hosts are validated against.
cp "${src}/internal/controller/controllers/default_controller_hw_requirements.json" "${dest}/hw-requirements.json"
# The RBAC its manifests give its service account (config/rbac): the lab runs it with that
# account's token, as its pod runs.
rm -rf "${dest}/rbac"
mkdir -p "${dest}/rbac"
cp "${src}/config/rbac/role.yaml" "${src}/config/rbac/leader_election_role.yaml" "${dest}/rbac/"
chmod -R u+w "${dest}/crds" "${dest}/hw-requirements.json" "${dest}/rbac"
printf '%s' "${stamp}" >"${dest}/.ready"
log "assisted-service ${ASSISTED_SERVICE_VERSION} ready in ${dest}"
printf '%s\n' "${dest}"
