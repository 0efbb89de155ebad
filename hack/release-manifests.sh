#!/usr/bin/env bash
# release-manifests.sh [OUT]: write what a release of the three providers carries, and a local
# clusterctl repository that `clusterctl init` can install from, into OUT (default: out/).
#
#   OUT/infrastructure-components.yaml   OUT/bootstrap-components.yaml
#   OUT/control-plane-components.yaml    OUT/metadata.yaml    OUT/cluster-template*.yaml  OUT/clusterclass-*.yaml
#   OUT/runtime-extension-openshift-assisted.yaml
#   OUT/repository/<provider-label>/<version>/...   clusterctl's local repository layout:
#       infrastructure-agent, bootstrap-openshift-assisted, control-plane-openshift-assisted
#       (RELEASE_VERSION), cluster-api and infrastructure-metal3 (built from the modules pinned in
#       test/go.mod, so that `clusterctl init --infrastructure agent,metal3 ...` needs no network)
#   OUT/repository/cert-manager/<version>/cert-manager.yaml   cert-manager at the version this
#       clusterctl installs, rendered from cert-manager's own chart the way its release renders
#       cert-manager.yaml, so that `clusterctl init` and `clusterctl init list-images` need no network
#   OUT/clusterctl.yaml                  a clusterctl config whose providers: and cert-manager: point
#                                        at OUT/repository
#
# Environment: RELEASE_VERSION (v0.1.0; needs a release series in metadata.yaml),
# IMAGE_REGISTRY (quay.io/openshift-assisted), IMAGE_TAG (RELEASE_VERSION), KUSTOMIZE and HELM
# (from hack/ensure-tool.sh). Components are built with kustomize from each provider's config/default.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd -P)"
out="${1:-${root}/out}"
mkdir -p "${out}"
out="$(cd "${out}" && pwd -P)"

RELEASE_VERSION="${RELEASE_VERSION:-v0.1.0}"
IMAGE_REGISTRY="${IMAGE_REGISTRY:-quay.io/openshift-assisted}"
IMAGE_TAG="${IMAGE_TAG:-${RELEASE_VERSION}}"
KUSTOMIZE="${KUSTOMIZE:-$("${root}/hack/ensure-tool.sh" kustomize)}"
HELM="${HELM:-$("${root}/hack/ensure-tool.sh" helm)}"

log() { printf 'release-manifests: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# A semantic version whose release series metadata.yaml maps to a contract, or clusterctl refuses it.
"${root}/hack/release-version.sh" "${RELEASE_VERSION}" || die "RELEASE_VERSION ${RELEASE_VERSION} cannot be released"

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
# --infrastructure agent [--flavor sno|agent|agent-sno|arbiter|topology|sno-topology|...]), and so do the
# ClusterClasses that clusterctl adds to a topology flavor from the same repository.
for t in "${root}"/templates/cluster-template*.yaml "${root}"/templates/clusterclass-*.yaml; do
  cp "${t}" "${out}/"
  cp "${t}" "${repo}/infrastructure-agent/${RELEASE_VERSION}/"
done
# The control plane's runtime extension (an ExtensionConfig users apply when Cluster API runs with
# in-place updates): a release file of its own.
cp "${root}/templates/runtime-extension-openshift-assisted.yaml" "${out}/"

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

# cert-manager at the version clusterctl installs (CertManagerDefaultVersion of the clusterctl this
# project pins), rendered as cert-manager's release renders cert-manager.yaml (its
# make/manifests.mk: the namespace, then `helm template` of deploy/charts/cert-manager with the
# CRDs, creator=static and no startupapicheck).
cm_version="$(sed -nE 's/^[[:space:]]*CertManagerDefaultVersion[[:space:]]*=[[:space:]]*"(v[^"]+)".*/\1/p' \
  "${capi_dir}/cmd/clusterctl/client/config/cert_manager_client.go")"
[[ -n "${cm_version}" ]] || die "no CertManagerDefaultVersion in clusterctl ${capi_version}"
cm_dir="$(cd "${TMPDIR:-/tmp}" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "github.com/cert-manager/cert-manager@${cm_version}" \
  | sed -nE 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')"
[[ -d "${cm_dir}/deploy/charts/cert-manager" ]] || die "no cert-manager chart in github.com/cert-manager/cert-manager@${cm_version}"
chart="$(mktemp -d "${TMPDIR:-/tmp}/capoa-cert-manager-chart.XXXXXX")"
trap 'rm -rf -- "${chart}"' EXIT
cp -R "${cm_dir}/deploy/charts/cert-manager" "${chart}/cert-manager"
chmod -R u+w "${chart}"
sed -e "s/^version: .*/version: ${cm_version}/" -e "s/^appVersion: .*/appVersion: ${cm_version}/" \
  -e 's/{{IS_PRERELEASE}}/false/' "${chart}/cert-manager/Chart.template.yaml" > "${chart}/cert-manager/Chart.yaml"
mkdir -p "${repo}/cert-manager/${cm_version}"
{
  cat "${cm_dir}/deploy/manifests/namespace.yaml"
  echo "---"
  "${HELM}" template --kube-version=1.29.0 --api-versions="" --namespace=cert-manager --set=crds.enabled=true \
    --set=creator=static --set=startupapicheck.enabled=false cert-manager "${chart}/cert-manager" | sed -e '1{/^---$/d;}'
} > "${repo}/cert-manager/${cm_version}/cert-manager.yaml" || die "helm template of cert-manager ${cm_version} failed"
grep -q "quay.io/jetstack/cert-manager-controller:${cm_version}" "${repo}/cert-manager/${cm_version}/cert-manager.yaml" \
  || die "the rendered cert-manager.yaml does not run cert-manager-controller ${cm_version}"
log "cert-manager ${cm_version}"

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
cert-manager:
  url: file://${repo}/cert-manager/${cm_version}/cert-manager.yaml
  version: ${cm_version}
EOF
log "clusterctl config: ${out}/clusterctl.yaml"
