#!/usr/bin/env bash
# release-manifests.sh [OUT]: write what a release of the three providers carries, and a local
# clusterctl repository that `clusterctl init` can install from, into OUT (default: out/).
#
#   OUT/infrastructure-components.yaml   OUT/bootstrap-components.yaml
#   OUT/control-plane-components.yaml    OUT/metadata.yaml    OUT/cluster-template*.yaml
#   OUT/repository/<provider-label>/<version>/...   clusterctl's local repository layout:
#       infrastructure-agent, bootstrap-openshift-assisted, control-plane-openshift-assisted
#       (RELEASE_VERSION), cluster-api and infrastructure-metal3 (built from the modules pinned in
#       test/go.mod, so that `clusterctl init --infrastructure agent,metal3 ...` needs no network)
#   OUT/clusterctl.yaml                  a clusterctl config whose providers: point at OUT/repository
#
# Environment: RELEASE_VERSION (v0.1.0; needs a release series in metadata.yaml),
# IMAGE_REGISTRY (quay.io/openshift-assisted), IMAGE_TAG (RELEASE_VERSION), KUSTOMIZE (from
# hack/ensure-tool.sh). Components are built with kustomize from each provider's config/default.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd -P)"
out="${1:-${root}/out}"
mkdir -p "${out}"
out="$(cd "${out}" && pwd -P)"

RELEASE_VERSION="${RELEASE_VERSION:-v0.1.0}"
IMAGE_REGISTRY="${IMAGE_REGISTRY:-quay.io/openshift-assisted}"
IMAGE_TAG="${IMAGE_TAG:-${RELEASE_VERSION}}"
KUSTOMIZE="${KUSTOMIZE:-$("${root}/hack/ensure-tool.sh" kustomize)}"

log() { printf 'release-manifests: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ "${RELEASE_VERSION}" =~ ^v([0-9]+)\.([0-9]+)\.([0-9]+)(-[0-9A-Za-z.-]+)?$ ]] \
  || die "RELEASE_VERSION '${RELEASE_VERSION}' is not a semantic version such as v0.1.0"
major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"
# metadata.yaml must map this release's series to a contract, or clusterctl refuses it.
awk -v M="${major}" -v m="${minor}" '
  /^- major:/ { maj = $3 } /^  minor:/ { if (maj == M && $2 == m) found = 1 }
  END { exit found ? 0 : 1 }' "${root}/metadata.yaml" \
  || die "metadata.yaml has no release series ${major}.${minor} for ${RELEASE_VERSION}"

# build DIR: kustomize build, with the image placeholders of config/default/manager_image_patch.yaml set.
build() {
  "${KUSTOMIZE}" build "$1" | sed -e "s|__IMAGE_REGISTRY__|${IMAGE_REGISTRY}|g" -e "s|__IMAGE_TAG__|${IMAGE_TAG}|g"
}

# module_dir MODULE: the module-cache folder of MODULE at the version test/go.mod pins.
module_dir() {
  local dir
  (cd "${root}/test" && GOWORK=off GOFLAGS=-mod=mod go mod download "$1") >&2 \
    || die "go mod download $1 failed"
  dir="$(cd "${root}/test" && GOWORK=off go list -m -f '{{.Dir}}' "$1")"
  [[ -d "${dir}" ]] || die "no module folder for $1"
  printf '%s\n' "${dir}"
}
module_version() { (cd "${root}/test" && GOWORK=off go list -m -f '{{.Version}}' "$1"); }

repo="${out}/repository"
rm -rf "${repo}"

# provider LABEL COMPONENTS_FILE CONFIG_DIR: one of this project's providers.
provider() {
  local label="$1" file="$2" config="$3" dir="${repo}/$1/${RELEASE_VERSION}"
  mkdir -p "${dir}"
  build "${config}" > "${out}/${file}"
  [[ "$(grep -c '^kind: Namespace$' "${out}/${file}")" == 1 ]] || die "${file} must hold exactly one Namespace"
  cp "${out}/${file}" "${dir}/${file}"
  cp "${root}/metadata.yaml" "${dir}/metadata.yaml"
  log "${label} ${RELEASE_VERSION}: ${out}/${file}"
}
provider infrastructure-agent infrastructure-components.yaml "${root}/infrastructure/config/default"
provider bootstrap-openshift-assisted bootstrap-components.yaml "${root}/bootstrap/config/default"
provider control-plane-openshift-assisted control-plane-components.yaml "${root}/controlplane/config/default"
cp "${root}/metadata.yaml" "${out}/metadata.yaml"
# Cluster templates belong to the infrastructure provider's repository (clusterctl generate cluster
# --infrastructure agent [--flavor sno|agent]).
for t in "${root}"/templates/cluster-template*.yaml; do
  cp "${t}" "${out}/"
  cp "${t}" "${repo}/infrastructure-agent/${RELEASE_VERSION}/"
done

# Core Cluster API and CAPM3 at the versions this project is built and tested with.
capi_version="$(module_version sigs.k8s.io/cluster-api)"
capi_dir="$(module_dir sigs.k8s.io/cluster-api)"
mkdir -p "${repo}/cluster-api/${capi_version}"
"${KUSTOMIZE}" build "${capi_dir}/config/default" \
  | sed -e "s|gcr.io/k8s-staging-cluster-api/cluster-api-controller:main|registry.k8s.io/cluster-api/cluster-api-controller:${capi_version}|" \
  > "${repo}/cluster-api/${capi_version}/core-components.yaml"
cp "${capi_dir}/metadata.yaml" "${repo}/cluster-api/${capi_version}/metadata.yaml"
log "cluster-api ${capi_version}"

capm3_version="$(module_version github.com/metal3-io/cluster-api-provider-metal3)"
capm3_dir="$(module_dir github.com/metal3-io/cluster-api-provider-metal3)"
mkdir -p "${repo}/infrastructure-metal3/${capm3_version}"
"${KUSTOMIZE}" build "${capm3_dir}/config/default" \
  | sed -e "s|quay.io/metal3-io/cluster-api-provider-metal3:main|quay.io/metal3-io/cluster-api-provider-metal3:${capm3_version}|" \
  > "${repo}/infrastructure-metal3/${capm3_version}/infrastructure-components.yaml"
cp "${capm3_dir}/metadata.yaml" "${repo}/infrastructure-metal3/${capm3_version}/metadata.yaml"
log "infrastructure-metal3 ${capm3_version}"

cat > "${out}/clusterctl.yaml" <<EOF
# clusterctl configuration for the local repository written by hack/release-manifests.sh:
#   clusterctl init --config ${out}/clusterctl.yaml \\
#     --core cluster-api:${capi_version} --infrastructure agent,metal3 \\
#     --bootstrap openshift-assisted --control-plane openshift-assisted
providers:
- name: cluster-api
  type: CoreProvider
  url: file://${repo}/cluster-api/${capi_version}/core-components.yaml
- name: agent
  type: InfrastructureProvider
  url: file://${repo}/infrastructure-agent/${RELEASE_VERSION}/infrastructure-components.yaml
- name: metal3
  type: InfrastructureProvider
  url: file://${repo}/infrastructure-metal3/${capm3_version}/infrastructure-components.yaml
- name: openshift-assisted
  type: BootstrapProvider
  url: file://${repo}/bootstrap-openshift-assisted/${RELEASE_VERSION}/bootstrap-components.yaml
- name: openshift-assisted
  type: ControlPlaneProvider
  url: file://${repo}/control-plane-openshift-assisted/${RELEASE_VERSION}/control-plane-components.yaml
EOF
log "clusterctl config: ${out}/clusterctl.yaml"
