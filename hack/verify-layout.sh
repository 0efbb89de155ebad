#!/usr/bin/env bash
# verify-layout.sh: the module boundaries the repository keeps (see README "Layout"), checked on
# the packages Go would build:
#   - the api module's packages import no controller-runtime (assisted-service/api does, which is
#     why api/go.mod lists it as indirect), except pkg/conversion: the Hub and Convertible
#     interfaces that older API versions implement, as Cluster API's own API packages do;
#   - no provider module requires another provider module;
#   - no production package (non-test files of api, pkg and the providers) imports testing,
#     gomega, ginkgo or anything of test/ (simulators, envtest harness).
# Each `go list` loads a module's whole build graph (about a second of CPU), so they run side by
# side, one per module, and the checks read what they wrote; the provider modules' requirements
# are read from their go.mod (`go list -m all` asked the module proxy about modules that
# replace directives leave without a version).
set -euo pipefail
cd "$(dirname "$0")/.."

repo=github.com/openshift-assisted/cluster-api-provider-openshift-assisted
providers=(infrastructure bootstrap controlplane)
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT

pids=()
for m in api pkg "${providers[@]}"; do
	(cd "${m}" && go list -f '{{.ImportPath}}: {{join .Imports " "}}' ./... >"${tmp}/${m}.imports") &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "${p}" || { echo "go list failed (see above)" >&2; exit 1; }
done

bad=$(tr ' ' '\n' <"${tmp}/api.imports" | grep -E '^sigs\.k8s\.io/controller-runtime' | grep -vx 'sigs.k8s.io/controller-runtime/pkg/conversion' || true)
if [[ -n "${bad}" ]]; then
	echo "api/ imports controller-runtime (use apimachinery's runtime.NewSchemeBuilder; only pkg/conversion is allowed): ${bad}" >&2
	fail=1
fi

for m in "${providers[@]}"; do
	for other in "${providers[@]}"; do
		[[ "${m}" == "${other}" ]] && continue
		# go.mod lists every module the provider's build needs (module graph pruning, Go 1.17+).
		if (cd "${m}" && go mod edit -json) | grep -q "\"Path\": \"${repo}/${other}\""; then
			echo "${m}/go.mod requires the ${other} provider module: share through api/ or pkg/ instead" >&2
			fail=1
		fi
	done
done

for m in api pkg "${providers[@]}"; do
	out=$(while read -r pkg imports; do
		for i in ${imports}; do
			case "${i}" in
				testing|github.com/onsi/gomega*|github.com/onsi/ginkgo*|"${repo}"/test/*|sigs.k8s.io/controller-runtime/pkg/envtest*)
					echo "${pkg} imports ${i}" ;;
			esac
		done
	done <"${tmp}/${m}.imports")
	if [[ -n "${out}" ]]; then
		echo "production code imports test code:" >&2
		echo "${out}" >&2
		fail=1
	fi
done

if [[ "${fail}" -ne 0 ]]; then
	exit 1
fi
echo "Module layout is as documented."
