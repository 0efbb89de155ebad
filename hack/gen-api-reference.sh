#!/usr/bin/env bash
# gen-api-reference.sh: generate docs/api-reference/<provider>.md from the API types (their Go doc
# comments and kubebuilder markers) with github.com/elastic/crd-ref-docs, installed once, pinned,
# into the same versioned cache as hack/ensure-tool.sh (CRD_REF_DOCS_VERSION, default v0.3.0).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd -P)"
version="${CRD_REF_DOCS_VERSION:-v0.3.0}"
cache_root="${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/capoa}"
dir="${cache_root}/tools/crd-ref-docs-${version}"
bin="${dir}/crd-ref-docs"

if [[ ! -x "${bin}" ]]; then
  mkdir -p "${dir}"
  work="$(mktemp -d "${TMPDIR:-/tmp}/capoa-tool-crd-ref-docs.XXXXXX")"
  trap 'rm -rf -- "${work}"' EXIT
  echo "gen-api-reference: installing github.com/elastic/crd-ref-docs@${version}..." >&2
  (cd "${work}" && GOWORK=off GOBIN="${work}" go install -trimpath "github.com/elastic/crd-ref-docs@${version}") >&2
  mv -f "${work}/crd-ref-docs" "${bin}"
fi

mkdir -p "${root}/docs/api-reference"
for p in infrastructure bootstrap controlplane; do
  (cd "${root}/api" && "${bin}" --log-level=ERROR --config="${root}/hack/api-reference-config.yaml" \
    --source-path="./${p}" --renderer=markdown --output-path="${root}/docs/api-reference/${p}.md")
done
echo "gen-api-reference: docs/api-reference/{infrastructure,bootstrap,controlplane}.md" >&2
