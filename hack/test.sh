#!/usr/bin/env bash
# test.sh unit|lab|full: the project's test commands (make test-unit, make test-lab, make test).
#
#   unit  the inner loop: the generated-file, gofmt, layout and doc-path checks, lint, and every
#         module's unit and envtest tests, without the lab suites (lab_packages below).
#   lab   the lab suites alone: the clusterctl and Cluster API Operator tests, the release and
#         RBAC tests, the lab's own tests, the fleet and e2e smoke specs, then the system suite
#         (its fault spec included; Ginkgo, SYSTEM_PROCS processes side by side).
#   full  what CI runs (bash .ci/run): unit's checks, the Dockerfile and workflow checks, the
#         build of the managers and the demo, every module's vet with and without go.work (vet
#         compiles every package, so a separate go build ./... would only link the same mains
#         again); then the modules' tests and the lab suites, one phase after the other.
#
# Each run ends with a table: every step and suite, its wall time, what it counted and its
# result, then "N passed, N failed, N skipped". The `go test -json` streams, the Ginkgo JSON
# report and each step's log stay in TEST_ARTIFACTS (default _artifacts/test), as does the
# system suite's per-spec report; a failed system spec's lab state is in its report entry.
#
# Environment:
#   TEST_ARTIFACTS   where the streams, reports and logs go (emptied first)
#   TEST_TIMEOUT     go test's -timeout per test binary (default 30m)
#   TEST_PARALLEL    lab suite binaries go test runs at once (its -p; default 2)
#   UNIT_PARALLEL    unit and envtest binaries run at once (default 4)
#   UNIT_TEST_PARALLEL  parallel tests (t.Parallel) run at once within a unit binary (its
#                    -test.parallel; default 4: they wait on API servers more than they compute)
#   SYSTEM_PROCS     Ginkgo processes for the system suite (default 2: a lab keeps about 0.9 of
#                    a core busy, so two fill the machine's 2 cores)
#   SYSTEM_ARGS      further ginkgo flags for the system suite, e.g. --focus='etcd'
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${root}" || exit 2

mode="${1:-}"
case "${mode}" in
  unit|lab|full) ;;
  *) echo "usage: hack/test.sh unit|lab|full" >&2; exit 2 ;;
esac

export GONOSUMDB="${GONOSUMDB:-github.com/openshift,github.com/metal3-io,k8s.io/kubernetes}"
# -trimpath: what is compiled does not depend on where the checkout is, so a fresh clone (CI
# clones anew for every run) reuses what the Go build cache holds from any earlier checkout.
# Without it every package of this repository is compiled again in every clone.
export GOFLAGS="-trimpath${GOFLAGS:+ ${GOFLAGS}}"
repo=github.com/openshift-assisted/cluster-api-provider-openshift-assisted
modules=(api pkg infrastructure bootstrap controlplane test/support test/support/baremetaloperator test)
timeout="${TEST_TIMEOUT:-30m}"
procs="${SYSTEM_PROCS:-2}"
parallel="${TEST_PARALLEL:-2}"
unit_parallel="${UNIT_PARALLEL:-4}"
unit_test_parallel="${UNIT_TEST_PARALLEL:-4}"
# The lab suites: the packages that start labs or real providers' processes (everything else is
# a unit or envtest test). The system suite runs under the Ginkgo CLI (ginkgo -p); the others
# under go test.
lab_packages=(./clusterctl ./e2e ./fleet ./lab ./rbac ./release)

art="${TEST_ARTIFACTS:-${root}/_artifacts/test}"
times="${XDG_CACHE_HOME:-${HOME}/.cache}/capoa/test-times/unit.txt"
test_bin="${XDG_CACHE_HOME:-${HOME}/.cache}/capoa/test-bin/unit"
rm -rf "${art}" && mkdir -p "${art}/logs" || exit 2
art="$(cd "${art}" && pwd -P)"
steps="${art}/run.steps"
: >"${steps}"
start="${SECONDS}"

log() { printf '== %s\n' "$*"; }

# The reporter, built once per run: a stdlib-only program of the test/support module.
report="${art}/testreport"
(cd test/support && go build -o "${report}" ./cmd/testreport) || { echo "building the test reporter failed" >&2; exit 2; }

# step NAME COMMAND...: runs COMMAND, printing its output (also in logs/NAME.log) when it ends,
# and records its wall time and exit status.
step() {
  local name="$1" t0="${SECONDS}" rc=0 logf
  shift
  logf="${art}/logs/${name//\//_}.log"
  "$@" >"${logf}" 2>&1 || rc=$?
  printf '%s %s %s\n' "$(( SECONDS - t0 ))" "${rc}" "${name}" >>"${steps}"
  log "${name} ($(( SECONDS - t0 )) s, exit ${rc})"
  cat "${logf}"
  return "${rc}"
}

# gotest LABEL DIR ARGS...: go test -json in DIR, printed as go test prints it, the stream kept
# in LABEL.json for the table.
gotest() {
  local label="$1" dir="$2"
  shift 2
  log "go test (${label})"
  (cd "${dir}" && go test -json -count=1 -p="${parallel}" -timeout="${timeout}" "$@" 2>&1) | "${report}" echo "${art}/${label//\//_}.json"
  local rc="${PIPESTATUS[0]}"
  return "${rc}"
}

# unit_packages: every module's test packages (go.work makes them one build), without the lab
# suites and the system suite of the test module: "import-path<TAB>dir<TAB>name" lines.
unit_packages() {
  # shellcheck disable=SC2046 # one pattern per word
  go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{"\t"}}{{.Dir}}{{"\t"}}{{.Name}}{{end}}' $(printf -- "./%s/... " "${modules[@]}") |
    grep -v -e "^${repo}/test/system"$'\t' $(printf -- "-e ^${repo}/test/%s"$'\t'" " "${lab_packages[@]#./}")
}

# unit_tests: the modules' unit and envtest tests, UNIT_PARALLEL binaries at once. testreport run
# is go test -json without its links: it keeps the test binaries (test_bin, outside the checkout)
# and does not link one again while it is up to date, which go test does every run (about 145 s
# of the phase's CPU). The binaries wait more than they compute (an envtest API server each,
# controllers polling), so more of them than cores keep the cores busy. They start the longest
# first, as the last run on this machine measured them (times), so that a long binary does not
# start last and run alone at the end.
unit_tests() {
  local rc=0
  log "go test (unit)"
  unit_packages >"${art}/unit.packages" || return 1
  "${report}" run -bin "${test_bin}" -times "${times}" -p "${unit_parallel}" -parallel "${unit_test_parallel}" -timeout "${timeout}" <"${art}/unit.packages" |
    "${report}" echo "${art}/unit.json"
  [[ "${PIPESTATUS[0]}" -eq 0 ]] || rc=1
  mkdir -p "${times%/*}" && "${report}" times "${art}/unit.json" >"${times}.new" && mv "${times}.new" "${times}"
  return "${rc}"
}

system_suite() {
  local ginkgo rc=0
  ginkgo="$(hack/ensure-tool.sh ginkgo)" || return 1
  log "system suite (ginkgo, ${procs} processes)"
  local extra=()
  # SYSTEM_ARGS is shell words, quotes included (--focus='never loses etcd').
  eval "extra=(${SYSTEM_ARGS:-})" || return 1
  (cd test && "${ginkgo}" run --no-color --procs="${procs}" --timeout="${timeout}" --poll-progress-after=5m \
    --json-report=system.ginkgo.json --output-dir="${art}" "${extra[@]+"${extra[@]}"}" ./system) >"${art}/logs/system.log" 2>&1 || rc=$?
  if [[ "${rc}" -eq 0 ]]; then
    tail -n 12 "${art}/logs/system.log"
  else
    cat "${art}/logs/system.log"
  fi
  return "${rc}"
}

lab_suites() {
  local rc=0
  gotest lab test "${lab_packages[@]}" || rc=1
  system_suite || rc=1
  return "${rc}"
}

failed=0
export KUBEBUILDER_ASSETS
KUBEBUILDER_ASSETS="$(hack/ensure-envtest.sh)" || { echo "hack/ensure-envtest.sh failed" >&2; exit 2; }
export FAULT_REPORT="${art}/faults.txt"
: >"${FAULT_REPORT}"

# checks: what unit and full check before any test runs.
checks() {
  local rc=0
  step verify-generated hack/verify-generated.sh || rc=1
  step verify-fmt make --no-print-directory verify-fmt || rc=1
  step verify-tidy make --no-print-directory verify-tidy || rc=1
  step verify-layout hack/verify-layout.sh || rc=1
  step verify-doc-paths hack/verify-doc-paths.sh || rc=1
  step lint hack/lint.sh || rc=1
  return "${rc}"
}

case "${mode}" in
  unit)
    checks || failed=1
    unit_tests || failed=1
    ;;
  lab)
    lab_suites || failed=1
    ;;
  full)
    checks || failed=1
    step verify-dockerfiles make --no-print-directory verify-dockerfiles || failed=1
    step verify-workflows hack/verify-workflows.sh || failed=1
    step build make --no-print-directory build || failed=1
    step vet make --no-print-directory vet || failed=1
    # The tests, one phase at a time: each fills the 2 cores on its own, and phases side by
    # side only slowed each other (every API server they start costs CPU while it waits).
    unit_tests || failed=1
    lab_suites || failed=1
    ;;
esac

if [[ -s "${FAULT_REPORT}" ]]; then
  echo "fault suites (what they injected and found):"
  cat "${FAULT_REPORT}"
fi
echo
log "time per step and suite (artifacts: ${art})"
shopt -s nullglob
"${report}" table -total "$(( SECONDS - start ))" -prefix "${repo}/" "${steps}" "${art}"/*.json || failed=1
exit "${failed}"
