#!/usr/bin/env bash
# ensure-lint.sh: build (once) golangci-lint v2 with the Kube API Linter (KAL)
# compiled in, from the tool module hack/tools/golangci-kal, and print the
# binary's absolute path on stdout:
#
#   GOLANGCI_KAL="$(hack/ensure-lint.sh)"
#   "${GOLANGCI_KAL}" run --config .golangci.yml ./...       # plain golangci-lint
#   "${GOLANGCI_KAL}" run --config .golangci-kal.yml ./...   # KAL (module plugin)
#
# It extends hack/ensure-tool.sh: `golangci-lint custom` clones git
# repositories, which cannot work here, so the binary is built from our own
# module instead (its go.mod/go.sum pin golangci-lint and KAL exactly).
#
# Cache: ${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capoa}/tools/golangci-kal-<version>/golangci-kal
# where <version> is "<golangci-lint version>-kal.<KAL commit>", read from the
# tool module's go.mod. A stamp beside the binary holds the sha256 of the tool
# module's go.mod, go.sum and main.go, so any other edit rebuilds it too.
# The build runs with GOWORK=off (the tool module is not in go.work).
# A warm run only reads files and runs no go command.
# All progress output goes to stderr; stdout carries only the binary path.
set -euo pipefail

log() { printf 'ensure-lint: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

case "${1:-}" in
  "") ;;
  -h|--help)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 0
    ;;
  *) die "no arguments expected (got '$*'); see --help" ;;
esac

name="golangci-kal"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
src="${root}/hack/tools/${name}"
[[ -f "${src}/go.mod" && -f "${src}/go.sum" && -f "${src}/main.go" ]] \
  || die "tool module ${src} is incomplete (needs go.mod, go.sum, main.go)"

# require_version MODULE: the version go.mod requires for MODULE (no go command).
require_version() {
  awk -v mod="$1" '
    $1 == "require" && $2 == mod { print $3; exit }
    $1 == mod && $2 ~ /^v/       { print $2; exit }
  ' "${src}/go.mod"
}
golangci_version="$(require_version github.com/golangci/golangci-lint/v2)"
kal_version="$(require_version sigs.k8s.io/kube-api-linter)"
[[ "${golangci_version}" =~ ^v2\.[0-9]+\.[0-9]+$ ]] \
  || die "cannot read the golangci-lint v2 version from ${src}/go.mod (got '${golangci_version}')"
# KAL has no release tags yet: a pseudo-version names the cache by its commit.
if [[ "${kal_version}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+-.*[0-9]{14}-([0-9a-f]{12})$ ]]; then
  kal_rev="${BASH_REMATCH[1]}"
elif [[ "${kal_version}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  kal_rev="${kal_version}"
else
  die "cannot read the kube-api-linter version from ${src}/go.mod (got '${kal_version}')"
fi
version="${golangci_version}-kal.${kal_rev}"

sources_sha="$(cd "${src}" && cat go.mod go.sum main.go | sha256sum | cut -d' ' -f1)"

cache_root="${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/capoa}"
dir="${cache_root}/tools/${name}-${version}"
bin="${dir}/${name}"
stamp="${dir}/.sources-sha256"

fresh() { [[ -f "${bin}" && -x "${bin}" && -f "${stamp}" && "$(<"${stamp}")" == "${sources_sha}" ]]; }

# Warm path: no lock, no go command.
if fresh; then
  printf '%s\n' "$(cd "${dir}" && pwd -P)/${name}"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to build ${name}"
command -v flock >/dev/null 2>&1 || die "flock is not on PATH (package util-linux)"

mkdir -p "${dir}" || die "cannot create cache folder ${dir}"
dir="$(cd "${dir}" && pwd -P)"
bin="${dir}/${name}"
stamp="${dir}/.sources-sha256"

# One builder per version: a second caller waits, then finds the binary.
exec 9>"${dir}/.lock"
if ! flock -n 9; then
  log "another process is building ${name} ${version}; waiting for its lock..."
  flock 9
fi

if ! fresh; then
  stage=""
  cleanup() { rm -rf -- "${stage}"; }
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  # Build into a staging dir next to the final binary, then move it in place
  # (same filesystem, so the move is atomic); the stamp is written last.
  stage="$(mktemp -d "${dir}/.stage.XXXXXX")"
  log "building ${name} ${version} (golangci-lint ${golangci_version} + kube-api-linter ${kal_version}); the first build takes several minutes..."
  (
    cd "${src}"
    export GOWORK=off
    go build -mod=readonly -trimpath -ldflags "-s -w" -o "${stage}/${name}" .
  ) >&2 || die "building ${name} in ${src} failed (see above)"

  [[ -f "${stage}/${name}" && -x "${stage}/${name}" ]] || die "the build did not produce ${name}"
  mv -f -- "${stage}/${name}" "${bin}"
  printf '%s\n' "${sources_sha}" >"${stamp}.tmp" && mv -f -- "${stamp}.tmp" "${stamp}"
  log "${name} ${version} ready"
fi

printf '%s\n' "${bin}"
