#!/usr/bin/env bash
# lint.sh [GOLANGCI-LINT RUN FLAGS...]: lint every Go module of the repository.
#
#   - golangci-lint with .golangci.yml in each module (api pkg infrastructure
#     bootstrap controlplane test test/support test/support/baremetaloperator; a
#     folder without a go.mod is skipped, so this works before and after a module
#     is added or removed);
#   - the Kube API Linter (KAL) with .golangci-kal.yml on the API types: the api
#     module, or, in a tree without it, each provider's api/ folder.
#
# One binary does both: golangci-lint with KAL compiled in, built once by
# hack/ensure-lint.sh.
# Extra arguments go to every `golangci-lint run`, e.g. `hack/lint.sh --fix`.
#
# Environment:
#   LINT_MODULES   modules to lint (default: the list above)
#   LINT_KAL       false to skip KAL (KAL alone: LINT_MODULES= hack/lint.sh)
#   GOLANGCI_KAL   the binary to use instead of building it with hack/ensure-lint.sh
#   LINT_JSON_DIR  also write each run's findings as JSON into this folder
#                  (<module>.json, kal-<module>.json; "/" in a module becomes "_")
#
# Exit status: 0 when every run is clean, 1 when any run reports findings,
# 2 when a run fails for another reason (bad config, package load error, ...).
set -uo pipefail

log() { printf 'lint: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${root}" || die "cannot cd to ${root}"

# The checksum database does not know some openshift and metal3 modules (as in the Makefile).
export GONOSUMDB="${GONOSUMDB:-github.com/openshift,github.com/metal3-io,k8s.io/kubernetes}"

modules="${LINT_MODULES-api pkg infrastructure bootstrap controlplane test test/support test/support/baremetaloperator}"
run_kal="${LINT_KAL:-true}"
json_dir="${LINT_JSON_DIR:-}"
if [[ -n "${json_dir}" ]]; then
  mkdir -p "${json_dir}" || die "cannot create ${json_dir}"
  json_dir="$(cd "${json_dir}" && pwd -P)"
fi

bin="${GOLANGCI_KAL:-}"
if [[ -z "${bin}" ]]; then
  bin="$("${root}/hack/ensure-lint.sh")" || die "hack/ensure-lint.sh failed"
fi
[[ -x "${bin}" ]] || die "not an executable: ${bin}"

# golangci-lint keys its cache on the absolute paths of the files, so in a fresh clone (CI clones
# anew for every run) it would lint everything again: 80 s instead of 25 s on 2 cores. It lints
# through a link at a fixed path instead, which points at this checkout while a lock is held (two
# checkouts linting at once take turns).
cache_dir="${XDG_CACHE_HOME:-${HOME}/.cache}/capoa"
mkdir -p "${cache_dir}" || die "cannot create ${cache_dir}"
exec 9>"${cache_dir}/lint-root.lock" || die "cannot open ${cache_dir}/lint-root.lock"
flock 9 || die "cannot lock ${cache_dir}/lint-root.lock"
ln -sfn "${root}" "${cache_dir}/lint-root" || die "cannot link ${cache_dir}/lint-root to ${root}"
root="${cache_dir}/lint-root"

extra=("$@") # flags for every run
worst=0
summary=()

# lint LABEL DIR CONFIG PACKAGES...: one golangci-lint run from DIR.
lint() {
  local label="$1" dir="$2" config="$3"
  shift 3
  # Reported paths are relative to the config file, i.e. to the repository root.
  local args=(run --config "${root}/${config}")
  if [[ -n "${json_dir}" ]]; then
    args+=(--output.text.path stdout --output.json.path "${json_dir}/${label//\//_}.json")
  fi
  log "${label}: golangci-lint run --config ${config} in ${dir}/ ($*)"
  local rc=0 start="${SECONDS}"
  (cd "${root}/${dir}" && "${bin}" "${args[@]}" "${extra[@]+"${extra[@]}"}" "$@") || rc=$?
  local took="$(( SECONDS - start ))s"
  case "${rc}" in
    0) summary+=("ok        ${label} (${took})") ;;
    1) summary+=("FINDINGS  ${label} (${took})"); (( worst < 1 )) && worst=1 ;;
    *) summary+=("FAILED    ${label} (exit ${rc}, ${took})"); worst=2 ;;
  esac
}

for m in ${modules}; do
  if [[ ! -f "${root}/${m}/go.mod" ]]; then
    log "${m}: no go.mod, skipped"
    continue
  fi
  lint "${m}" "${m}" .golangci.yml ./...
done

if [[ "${run_kal}" == "true" ]]; then
  if [[ -f "${root}/api/go.mod" ]]; then
    lint "kal-api" api .golangci-kal.yml ./...
  else
    # The layout before the api module: each provider's module holds its types in api/.
    for p in infrastructure bootstrap controlplane; do
      if [[ -f "${root}/${p}/go.mod" && -d "${root}/${p}/api" ]]; then
        lint "kal-${p}" "${p}" .golangci-kal.yml ./api/...
      fi
    done
  fi
fi

log "summary:"
for line in "${summary[@]+"${summary[@]}"}"; do
  log "  ${line}"
done
exit "${worst}"
