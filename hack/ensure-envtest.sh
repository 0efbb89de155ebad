#!/usr/bin/env bash
# ensure-envtest.sh: make sure a kube-apiserver, an etcd and a kubectl binary exist
# for envtest (and for tests that run kubectl as a user would), and a kube-controller-manager
# for the management clusters that need the rest of a control plane (its garbage collector and
# namespace controller: testenv.StartControllerManager), and print the absolute folder holding
# them on stdout:
#
#   export KUBEBUILDER_ASSETS="$(hack/ensure-envtest.sh)"
#
# setup-envtest cannot download here, so missing binaries are built from
# source through the Go module mirror (cold: ~5-8 min on 2 cores; with a warm
# GOCACHE: ~20 s). The binaries are cached outside the repo, keyed by version:
#   ${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capoa}/envtest/kube-<v>-etcd-<v>/
# A warm run checks `--version` of both binaries and runs no go command.
# All progress output goes to stderr; stdout carries only the folder path.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.35.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.4}"

log() { printf 'ensure-envtest: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ "${KUBE_VERSION}" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] \
  || die "KUBE_VERSION must look like v1.Y.Z, got '${KUBE_VERSION}'"
kube_minor="${BASH_REMATCH[1]}"
kube_patch="${BASH_REMATCH[2]}"
staging_version="v0.${kube_minor}.${kube_patch}" # k8s.io/<x> version matching KUBE_VERSION
[[ "${ETCD_VERSION}" =~ ^v3\.[0-9]+\.[0-9]+$ ]] \
  || die "ETCD_VERSION must look like v3.Y.Z, got '${ETCD_VERSION}'"

cache_root="${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/capoa}"
dest="${cache_root}/envtest/kube-${KUBE_VERSION}-etcd-${ETCD_VERSION}"

# version_ok BINARY EXPECTED_LINE: the binary's `--version` output has that exact line.
version_ok() {
  local bin="$1" want="$2" out
  [[ -f "${bin}" && -x "${bin}" ]] || return 1
  out="$("${bin}" --version 2>/dev/null)" || return 1
  grep -qxF -- "${want}" <<<"${out}"
}
kube_want="Kubernetes ${KUBE_VERSION}"
etcd_want="etcd Version: ${ETCD_VERSION#v}"
kube_ok() { version_ok "$1" "${kube_want}"; }
etcd_ok() { version_ok "$1" "${etcd_want}"; }
# kubectl has no --version: `kubectl version --client` prints "Client Version: v1.Y.Z".
# (Read whole, then matched: grep -q in a pipe would close it early, and kubectl's next write
# would fail the pipeline under pipefail.)
kubectl_ok() {
  local out
  [[ -f "$1" && -x "$1" ]] || return 1
  out="$("$1" version --client 2>/dev/null)" || return 1
  grep -qxF -- "Client Version: ${KUBE_VERSION}" <<<"${out}"
}

# Warm path: nothing to do, no lock, no go command.
if kube_ok "${dest}/kube-apiserver" && etcd_ok "${dest}/etcd" && kubectl_ok "${dest}/kubectl" \
  && kube_ok "${dest}/kube-controller-manager"; then
  (cd "${dest}" && pwd -P)
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to build the envtest binaries"
command -v flock >/dev/null 2>&1 || die "flock is not on PATH (package util-linux)"

mkdir -p "${dest}" || die "cannot create cache folder ${dest}"
dest="$(cd "${dest}" && pwd -P)"

# One builder per version folder: a second caller waits, then finds the binaries.
exec 9>"${dest}/.lock"
if ! flock -n 9; then
  log "another process is preparing ${dest}; waiting for its lock..."
  flock 9
fi

tmp_paths=()
cleanup() {
  local p
  for p in "${tmp_paths[@]+"${tmp_paths[@]}"}"; do
    rm -rf -- "${p}"
  done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Every go command runs in a throwaway module outside the repo's go.work.
# GOPROXY is left as it is (GOPRIVATE/GONOPROXY would skip the mirror).
# Some kubernetes tags are not in the checksum database, hence GONOSUMDB.
export GOWORK=off
export GOFLAGS=-mod=mod
export GONOSUMDB="k8s.io/kubernetes${GONOSUMDB:+,${GONOSUMDB}}"
export CGO_ENABLED="${CGO_ENABLED:-0}"

# gomod_path MODULE@VERSION: the path of that version's go.mod in the module cache.
gomod_path() {
  local out
  out="$(go list -m -f '{{.GoMod}}' "$1")" || die "cannot fetch the go.mod of $1 through GOPROXY=$(go env GOPROXY)"
  [[ -n "${out}" && -f "${out}" ]] || die "no go.mod found for $1 (got '${out}')"
  printf '%s\n' "${out}"
}

# go_header GO_MOD_FILE: the `go` and `godebug` directives of a go.mod, so the
# binary gets the same language version and GODEBUG defaults as upstream.
go_header() {
  awk '
    /^go[ \t]/                { print; next }
    /^godebug[ \t]*\(/        { inblock = 1; print; next }
    inblock                   { print; if ($0 ~ /^\)/) inblock = 0; next }
    /^godebug[ \t]/           { print; next }
  ' "$1"
}

# build_kube CMD: build k8s.io/kubernetes/cmd/CMD (kube-apiserver, kube-controller-manager or
# kubectl) at KUBE_VERSION into dest.
build_kube() {
  local cmd="$1" work kmod tmpbin replaces
  log "building ${cmd} ${KUBE_VERSION} from source (k8s.io/kubernetes; cold takes ~5-8 min on 2 cores)..."
  work="$(mktemp -d "${TMPDIR:-/tmp}/capoa-envtest-kube.XXXXXX")"
  tmp_paths+=("${work}")
  cd "${work}"

  kmod="$(gomod_path "k8s.io/kubernetes@${KUBE_VERSION}")"
  # k8s.io/kubernetes points its staging modules at ./staging/...; a dependent
  # module must pin them to the published k8s.io/<x> v0.Y.Z instead.
  # k8s.io/sample-* are skipped: not published for every patch, not needed.
  replaces="$(sed -nE 's#^[[:space:]]*(replace[[:space:]]+)?(k8s\.io/[^[:space:]]+)[[:space:]]+=>[[:space:]]+\./staging/.*$#\2#p' "${kmod}" \
    | grep -v '^k8s\.io/sample-' | sort -u)"
  [[ -n "${replaces}" ]] || die "no './staging/' replace found in ${kmod}; is ${KUBE_VERSION} a k8s.io/kubernetes release?"

  {
    echo "module capoa.local/envtest/kube-apiserver"
    echo
    go_header "${kmod}"
    echo
    echo "require k8s.io/kubernetes ${KUBE_VERSION}"
    echo
    echo "replace ("
    local m
    while IFS= read -r m; do
      printf '\t%s => %s %s\n' "${m}" "${m}" "${staging_version}"
    done <<<"${replaces}"
    echo ")"
  } >go.mod

  log "resolving k8s.io/kubernetes/cmd/${cmd}@${KUBE_VERSION} (staging modules at ${staging_version})..."
  go get "k8s.io/kubernetes/cmd/${cmd}@${KUBE_VERSION}" >&2 \
    || die "go get k8s.io/kubernetes/cmd/${cmd}@${KUBE_VERSION} failed (see above)"

  tmpbin="${dest}/.${cmd}.tmp.$$"
  tmp_paths+=("${tmpbin}")
  local ldflags="-s -w"
  local pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X ${pkg}.gitVersion=${KUBE_VERSION}"
    ldflags+=" -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${kube_minor}"
    ldflags+=" -X ${pkg}.gitTreeState=clean"
  done
  log "compiling ${cmd}..."
  go build -trimpath -ldflags "${ldflags}" -o "${tmpbin}" "k8s.io/kubernetes/cmd/${cmd}" >&2 \
    || die "go build k8s.io/kubernetes/cmd/${cmd}@${KUBE_VERSION} failed (see above)"
  case "${cmd}" in
    kube-apiserver | kube-controller-manager) kube_ok "${tmpbin}" || die "the built ${cmd} does not report '${kube_want}'" ;;
    kubectl) kubectl_ok "${tmpbin}" || die "the built kubectl does not report 'Client Version: ${KUBE_VERSION}'" ;;
  esac
  mv -f -- "${tmpbin}" "${dest}/${cmd}"
  cd /
  log "${cmd} ${KUBE_VERSION} ready"
}

build_etcd() {
  local work emod tmpbin
  log "building etcd ${ETCD_VERSION} from source (go.etcd.io/etcd/server/v3)..."
  work="$(mktemp -d "${TMPDIR:-/tmp}/capoa-envtest-etcd.XXXXXX")"
  tmp_paths+=("${work}")
  cd "${work}"

  emod="$(gomod_path "go.etcd.io/etcd/server/v3@${ETCD_VERSION}")"
  {
    echo "module capoa.local/envtest/etcd"
    echo
    go_header "${emod}"
    echo
    echo "require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}"
  } >go.mod
  cat >main.go <<'GO'
// Command etcd is the etcd server, built from the go.etcd.io/etcd/server/v3 module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
GO

  log "resolving go.etcd.io/etcd/server/v3@${ETCD_VERSION}..."
  go get "go.etcd.io/etcd/server/v3/etcdmain@${ETCD_VERSION}" >&2 \
    || die "go get go.etcd.io/etcd/server/v3/etcdmain@${ETCD_VERSION} failed (see above)"

  tmpbin="${dest}/.etcd.tmp.$$"
  tmp_paths+=("${tmpbin}")
  log "compiling etcd..."
  go build -trimpath -ldflags "-s -w" -o "${tmpbin}" . >&2 \
    || die "go build of etcd ${ETCD_VERSION} failed (see above)"
  etcd_ok "${tmpbin}" || die "the built etcd does not report '${etcd_want}'"
  mv -f -- "${tmpbin}" "${dest}/etcd"
  cd /
  log "etcd ${ETCD_VERSION} ready"
}

# Re-check under the lock: another caller may have built them meanwhile.
kube_ok "${dest}/kube-apiserver" || build_kube kube-apiserver
etcd_ok "${dest}/etcd" || build_etcd
kubectl_ok "${dest}/kubectl" || build_kube kubectl
kube_ok "${dest}/kube-controller-manager" || build_kube kube-controller-manager

kube_ok "${dest}/kube-apiserver" || die "${dest}/kube-apiserver does not report '${kube_want}'"
etcd_ok "${dest}/etcd" || die "${dest}/etcd does not report '${etcd_want}'"
kubectl_ok "${dest}/kubectl" || die "${dest}/kubectl does not report 'Client Version: ${KUBE_VERSION}'"
kube_ok "${dest}/kube-controller-manager" || die "${dest}/kube-controller-manager does not report '${kube_want}'"
printf '%s\n' "${dest}"
