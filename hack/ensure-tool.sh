#!/usr/bin/env bash
# ensure-tool.sh NAME: install a pinned Go tool into a versioned cache folder
# and print the binary's absolute path on stdout:
#
#   CONTROLLER_GEN="$(hack/ensure-tool.sh controller-gen)"
#
# Cache: ${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capoa}/tools/<name>-<version>/<name>
# Each tool is installed with its own `go install pkg@version` (one module
# graph per tool), from a temp dir with GOWORK=off so the repo's go.work never
# interferes. A warm run only checks the file and runs no go command.
# All progress output goes to stderr; stdout carries only the binary path.
set -euo pipefail

log() { printf 'ensure-tool: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

usage() {
  cat >&2 <<'USAGE'
usage: hack/ensure-tool.sh NAME
  NAME is one of: controller-gen, conversion-gen, kustomize, clusterctl, ginkgo, helm,
  actionlint, cluster-api-operator
  Pins (override with the variable shown):
    controller-gen  sigs.k8s.io/controller-tools/cmd/controller-gen  CONTROLLER_GEN_VERSION=v0.20.1
    conversion-gen  k8s.io/code-generator/cmd/conversion-gen         CONVERSION_GEN_VERSION=v0.35.6
    kustomize       sigs.k8s.io/kustomize/kustomize/v5                KUSTOMIZE_VERSION=v5.8.2
    clusterctl      sigs.k8s.io/cluster-api/cmd/clusterctl           CLUSTERCTL_VERSION=v1.13.4
    ginkgo          github.com/onsi/ginkgo/v2/ginkgo                 GINKGO_VERSION=v2.34.0
    helm            helm.sh/helm/v3/cmd/helm                         HELM_VERSION=v3.22.0
    actionlint      github.com/rhysd/actionlint/cmd/actionlint       ACTIONLINT_VERSION=v1.7.12
    cluster-api-operator  sigs.k8s.io/cluster-api-operator/cmd       CAPI_OPERATOR_VERSION=v0.29.0
USAGE
}

[[ $# -eq 1 ]] || { usage; exit 2; }
name="$1"

ldflags=""
# The binary go install writes, when the package's last element is not the tool's name.
built_name="${name}"
case "${name}" in
  controller-gen)
    version="${CONTROLLER_GEN_VERSION:-v0.20.1}"
    pkg="sigs.k8s.io/controller-tools/cmd/controller-gen"
    ;;
  conversion-gen)
    # The Kubernetes line and patch of the api module's k8s.io/apimachinery (v0.35.6).
    version="${CONVERSION_GEN_VERSION:-v0.35.6}"
    pkg="k8s.io/code-generator/cmd/conversion-gen"
    ;;
  kustomize)
    # v5.8.3 needs Go 1.27.
    version="${KUSTOMIZE_VERSION:-v5.8.2}"
    pkg="sigs.k8s.io/kustomize/kustomize/v5"
    ;;
  clusterctl)
    version="${CLUSTERCTL_VERSION:-v1.13.4}"
    pkg="sigs.k8s.io/cluster-api/cmd/clusterctl"
    # Without it `clusterctl version` reports no version.
    ldflags="-X sigs.k8s.io/cluster-api/version.gitVersion=${version}"
    ;;
  ginkgo)
    # Keep in step with the github.com/onsi/ginkgo/v2 version in go.mod.
    version="${GINKGO_VERSION:-v2.34.0}"
    pkg="github.com/onsi/ginkgo/v2/ginkgo"
    ;;
  helm)
    version="${HELM_VERSION:-v3.22.0}"
    pkg="helm.sh/helm/v3/cmd/helm"
    ;;
  actionlint)
    version="${ACTIONLINT_VERSION:-v1.7.12}"
    pkg="github.com/rhysd/actionlint/cmd/actionlint"
    ;;
  cluster-api-operator)
    # The Cluster API Operator's manager (its module's cmd package, which go install names cmd).
    version="${CAPI_OPERATOR_VERSION:-v0.29.0}"
    pkg="sigs.k8s.io/cluster-api-operator/cmd"
    built_name="cmd"
    ;;
  -h|--help)
    usage; exit 0
    ;;
  *)
    usage; die "unknown tool '${name}'"
    ;;
esac
[[ "${version}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+.][0-9A-Za-z.+-]*)?$ ]] \
  || die "bad version '${version}' for ${name}"

cache_root="${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/capoa}"
dir="${cache_root}/tools/${name}-${version}"
bin="${dir}/${name}"

# Warm path: no lock, no go command.
if [[ -f "${bin}" && -x "${bin}" ]]; then
  printf '%s\n' "$(cd "${dir}" && pwd -P)/${name}"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to install ${name}"
command -v flock >/dev/null 2>&1 || die "flock is not on PATH (package util-linux)"

mkdir -p "${dir}" || die "cannot create cache folder ${dir}"
dir="$(cd "${dir}" && pwd -P)"
bin="${dir}/${name}"

# One installer per tool version: a second caller waits, then finds the binary.
exec 9>"${dir}/.lock"
if ! flock -n 9; then
  log "another process is installing ${name} ${version}; waiting for its lock..."
  flock 9
fi

if [[ ! -f "${bin}" || ! -x "${bin}" ]]; then
  work=""
  stage=""
  cleanup() { rm -rf -- "${work}" "${stage}"; }
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  # go install runs from an empty temp dir (no go.mod, GOWORK=off) and writes
  # into a staging dir next to the final binary, which is then moved in place
  # (same filesystem, so the move is atomic).
  work="$(mktemp -d "${TMPDIR:-/tmp}/capoa-tool-${name}.XXXXXX")"
  stage="$(mktemp -d "${dir}/.stage.XXXXXX")"
  log "installing ${pkg}@${version} (first run compiles it; takes a while)..."
  (
    cd "${work}"
    export GOWORK=off GOBIN="${stage}"
    go install -trimpath ${ldflags:+-ldflags "${ldflags}"} "${pkg}@${version}"
  ) >&2 || die "go install ${pkg}@${version} failed (see above)"

  built="${stage}/${built_name}"
  [[ -f "${built}" && -x "${built}" ]] \
    || die "go install ${pkg}@${version} did not produce ${built_name} (got: $(find "${stage}" -mindepth 1 -printf '%f '))"
  mv -f -- "${built}" "${bin}"
  log "${name} ${version} ready"
fi

printf '%s\n' "${bin}"
