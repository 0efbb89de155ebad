#!/usr/bin/env bash
# Regenerates every generated file (make generate manifests) and fails when that changed any of
# them: a stale generated file. The regenerated files stay in place, ready to be committed.
set -euo pipefail
cd "$(dirname "$0")/.."

generated_files() {
	find . -path ./bin -prune -o -type f \( -name 'zz_generated.*.go' -o -path '*/config/crd/bases/*' \
		-o -path '*/config/rbac/role.yaml' -o -path '*/config/webhook/manifests.yaml' \
		-o -path './test/support/testenv/crds/*' -o -path './test/support/testenv/hypershift-crds/*' -o -path './test/support/sim/cvo/crds/*' \
		-o -path './test/support/sim/etcd/crds/*' \) -print | LC_ALL=C sort
}

snapshot() {
	generated_files | while read -r f; do printf '%s %s\n' "$(sha256sum < "$f" | cut -d' ' -f1)" "$f"; done
}

before=$(mktemp)
after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
snapshot > "$before"
make --no-print-directory generate manifests
snapshot > "$after"
if ! diff -u "$before" "$after" > /dev/null; then
	echo "Generated files were stale; they are regenerated now, commit them:" >&2
	diff "$before" "$after" | grep '^[<>]' | awk '{print "  " $3}' | sort -u >&2
	exit 1
fi
echo "Generated files are up to date."
