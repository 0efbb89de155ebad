#!/usr/bin/env bash
# verify-layout.sh: the module boundaries the repository keeps (see README "Layout"), checked on
# the packages Go would build:
#   - the api module's packages import no controller-runtime (assisted-service/api does, which is
#     why api/go.mod lists it as indirect), except pkg/conversion: the Hub and Convertible
#     interfaces that older API versions implement, as Cluster API's own API packages do;
#   - no provider module requires another provider module;
#   - no production package (non-test files of api, pkg and the providers) imports testing,
#     gomega, ginkgo or anything of test/ (simulators, envtest harness).
set -euo pipefail
cd "$(dirname "$0")/.."

repo=github.com/openshift-assisted/cluster-api-provider-openshift-assisted
providers=(infrastructure bootstrap controlplane)
fail=0

bad=$(cd api && go list -f '{{.ImportPath}}: {{join .Imports " "}}' ./... | tr ' ' '\n' | grep -E '^sigs\.k8s\.io/controller-runtime' | grep -vx 'sigs.k8s.io/controller-runtime/pkg/conversion' || true)
if [[ -n "${bad}" ]]; then
	echo "api/ imports controller-runtime (use apimachinery's runtime.NewSchemeBuilder; only pkg/conversion is allowed): ${bad}" >&2
	fail=1
fi

for m in "${providers[@]}"; do
	for other in "${providers[@]}"; do
		[[ "${m}" == "${other}" ]] && continue
		if (cd "${m}" && go list -m all 2>/dev/null | grep -q "^${repo}/${other} "); then
			echo "${m}/go.mod requires the ${other} provider module: share through api/ or pkg/ instead" >&2
			fail=1
		fi
	done
done

for m in api pkg "${providers[@]}"; do
	out=$(cd "${m}" && go list -f '{{.ImportPath}}: {{join .Imports " "}}' ./... | while read -r pkg imports; do
		for i in ${imports}; do
			case "${i}" in
				testing|github.com/onsi/gomega*|github.com/onsi/ginkgo*|"${repo}"/test/*|sigs.k8s.io/controller-runtime/pkg/envtest*)
					echo "${pkg} imports ${i}" ;;
			esac
		done
	done)
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
