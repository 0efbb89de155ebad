#!/usr/bin/env bash
# operator-configmaps.sh [OUT]: write, from the local repository hack/release-manifests.sh wrote
# into OUT/repository (default: out/), the ConfigMaps the Cluster API Operator installs providers
# from in an air-gapped management cluster (a provider's spec.fetchConfig.selector):
#
#   OUT/operator/<provider-label>-<version>.yaml   one ConfigMap per provider version, in the
#       namespace the provider object lives in (the operator lists ConfigMaps there), with
#       data.metadata (metadata.yaml) and data.components (the components file), and the labels
#       provider.cluster.x-k8s.io/{name,type,version}. A components file over 1 MiB goes gzipped
#       into binaryData.components with the annotation provider.cluster.x-k8s.io/compressed: "true",
#       as the operator expects (a ConfigMap holds at most 1 MiB).
#
# examples/operator/providers.yaml has the matching CoreProvider, InfrastructureProvider,
# BootstrapProvider and ControlPlaneProvider objects. KUSTOMIZE as in release-manifests.sh.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd -P)"
out="$(cd "${1:-${root}/out}" && pwd -P)"
repo="${out}/repository"
KUSTOMIZE="${KUSTOMIZE:-$("${root}/hack/ensure-tool.sh" kustomize)}"
max_size=$((1024 * 1024))

log() { printf 'operator-configmaps: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
[[ -d "${repo}" ]] || die "${repo} does not exist: run hack/release-manifests.sh (make release-manifests) first"

# label -> "type name namespace components-file"; the namespace is the one of the provider
# object in examples/operator/providers.yaml (and the components' own namespace).
declare -A providers=(
  [cluster-api]="core cluster-api capi-system core-components.yaml"
  [infrastructure-agent]="infrastructure agent capoa-agent-system infrastructure-components.yaml"
  [infrastructure-metal3]="infrastructure metal3 capm3-system infrastructure-components.yaml"
  [bootstrap-openshift-assisted]="bootstrap openshift-assisted capoa-bootstrap-system bootstrap-components.yaml"
  [control-plane-openshift-assisted]="controlplane openshift-assisted capoa-controlplane-system control-plane-components.yaml"
)

rm -rf "${out}/operator"
mkdir -p "${out}/operator"
work="$(mktemp -d "${TMPDIR:-/tmp}/capoa-operator-cm.XXXXXX")"
trap 'rm -rf -- "${work}"' EXIT

for label in "${!providers[@]}"; do
  read -r type name namespace file <<< "${providers[${label}]}"
  for dir in "${repo}/${label}"/*/; do
    version="$(basename "${dir}")"
    [[ -f "${dir}/${file}" && -f "${dir}/metadata.yaml" ]] || die "${dir} lacks ${file} or metadata.yaml"
    k="${work}/${label}-${version}"
    mkdir -p "${k}"
    cp "${dir}/metadata.yaml" "${k}/metadata"
    annotations=""
    if (( $(stat -c %s "${dir}/${file}") > max_size )); then
      # kustomize puts a file that is not UTF-8 text (gzip) into binaryData.
      gzip -9 -n -c "${dir}/${file}" > "${k}/components"
      annotations=$'  annotations:\n    provider.cluster.x-k8s.io/compressed: "true"'
    else
      cp "${dir}/${file}" "${k}/components"
    fi
    cat > "${k}/kustomization.yaml" <<EOF
namespace: ${namespace}
generatorOptions:
  disableNameSuffixHash: true
${annotations}
configMapGenerator:
- name: ${label}-${version}
  files:
  - metadata
  - components
  options:
    labels:
      provider.cluster.x-k8s.io/name: ${name}
      provider.cluster.x-k8s.io/type: ${type}
      provider.cluster.x-k8s.io/version: ${version}
EOF
    "${KUSTOMIZE}" build "${k}" > "${out}/operator/${label}-${version}.yaml"
    size="$(stat -c %s "${out}/operator/${label}-${version}.yaml")"
    (( size < max_size )) || die "ConfigMap ${label}-${version} is ${size} bytes, over the 1 MiB a ConfigMap may hold"
    log "${out}/operator/${label}-${version}.yaml (${size} bytes${annotations:+, gzipped})"
  done
done
