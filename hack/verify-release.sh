#!/usr/bin/env bash
# verify-release.sh DIR VERSION: check that what `make release` wrote into DIR carries VERSION and
# no other version of this project's providers:
#
#   - VERSION is a semantic version whose series DIR/metadata.yaml (and metadata.yaml) has;
#   - every image of the three components files is IMAGE_REGISTRY/capoa-<provider>:VERSION, the
#     provider of that file, and no capoa image anywhere in DIR has another tag;
#   - the local clusterctl repository has exactly one folder per provider, named VERSION, holding
#     the same components and metadata; DIR/clusterctl.yaml points at those folders;
#   - the operator ConfigMaps (DIR/operator) are named and labelled with VERSION;
#   - the managers DIR/bin/<provider>-manager-<os>-<arch>, one per RELEASE_PLATFORMS entry, are built
#     for that platform (go version -m); the ones this machine can run are run and must log
#     `"Starting" ... version="VERSION"`; for the others the binary must contain VERSION (the -X
#     value; -trimpath keeps -ldflags out of the build information).
#
# Environment: IMAGE_REGISTRY (quay.io/openshift-assisted), RELEASE_PLATFORMS ("linux/amd64
# linux/arm64", space- or comma-separated). Prints one line per check; exits 1 on the first failure.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd -P)"
log() { printf 'verify-release: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -eq 2 ]] || die "usage: $0 DIR VERSION"
dir="$1" version="$2"
[[ -d "${dir}" ]] || die "${dir} does not exist: run make release first"
dir="$(cd "${dir}" && pwd -P)"
IMAGE_REGISTRY="${IMAGE_REGISTRY:-quay.io/openshift-assisted}"
platforms="${RELEASE_PLATFORMS:-linux/amd64 linux/arm64}"
platforms="${platforms//,/ }"

# The version and its series, in the metadata.yaml the release ships and in the repository's.
"${root}/hack/release-version.sh" "${version}" || die "${version} cannot be released"
[[ -f "${dir}/metadata.yaml" ]] || die "${dir}/metadata.yaml is missing"
METADATA="${dir}/metadata.yaml" "${root}/hack/release-version.sh" "${version}" \
  || die "${dir}/metadata.yaml lacks the series of ${version}"
cmp -s "${dir}/metadata.yaml" "${root}/metadata.yaml" || die "${dir}/metadata.yaml differs from metadata.yaml"
log "ok: ${version} is a semantic version and metadata.yaml has its series"

# provider -> "components-file clusterctl-label"
declare -A providers=(
  [infrastructure]="infrastructure-components.yaml infrastructure-agent"
  [bootstrap]="bootstrap-components.yaml bootstrap-openshift-assisted"
  [controlplane]="control-plane-components.yaml control-plane-openshift-assisted"
)

for p in infrastructure bootstrap controlplane; do
  read -r file label <<< "${providers[${p}]}"
  f="${dir}/${file}" cms=""
  want="${IMAGE_REGISTRY}/capoa-${p}:${version}"
  [[ -f "${f}" ]] || die "${f} is missing"
  images="$(sed -nE 's/^[[:space:]-]*image:[[:space:]]*([^[:space:]].*)$/\1/p' "${f}" | tr -d '"'"'" | sort -u)"
  [[ -n "${images}" ]] || die "${file} has no image"
  while read -r img; do
    [[ "${img}" == "${want}" ]] || die "${file} runs image ${img}, not ${want}"
  done <<< "${images}"
  if grep -q '__IMAGE_' "${f}"; then die "${file} still has an image placeholder"; fi

  # The clusterctl repository: one folder, VERSION, with the same files.
  versions="$(cd "${dir}/repository/${label}" 2>/dev/null && ls -1)" || die "${dir}/repository/${label} is missing"
  [[ "${versions}" == "${version}" ]] || die "repository/${label} holds $(echo "${versions}" | tr '\n' ' ')instead of ${version} alone"
  cmp -s "${f}" "${dir}/repository/${label}/${version}/${file}" || die "repository/${label}/${version}/${file} differs from ${file}"
  cmp -s "${dir}/metadata.yaml" "${dir}/repository/${label}/${version}/metadata.yaml" \
    || die "repository/${label}/${version}/metadata.yaml differs from metadata.yaml"
  grep -q "^  url: file://.*/repository/${label}/${version}/${file}$" "${dir}/clusterctl.yaml" \
    || die "clusterctl.yaml does not point at repository/${label}/${version}/${file}"

  # The Cluster API Operator's ConfigMap, when operator-configmaps ran.
  if [[ -d "${dir}/operator" ]]; then
    cms="$(cd "${dir}/operator" && ls -1 | grep "^${label}-" || true)"
    [[ "${cms}" == "${label}-${version}.yaml" ]] || die "operator/ holds '$(echo "${cms}" | tr '\n' ' ')' for ${label}, not ${label}-${version}.yaml alone"
    grep -q "provider.cluster.x-k8s.io/version: ${version}$" "${dir}/operator/${cms}" \
      || die "operator/${cms} is not labelled provider.cluster.x-k8s.io/version: ${version}"
  fi
  log "ok: ${file}: ${images}; repository/${label}/${version}${cms:+; operator/${cms}}"
done

# No capoa image with another tag anywhere (templates, repository, ConfigMaps).
stray="$(grep -rhoE "capoa-(infrastructure|bootstrap|controlplane):[^\"' ]+" "${dir}" --exclude-dir=bin \
  | grep -vF ":${version}" | sort -u || true)"
[[ -z "${stray}" ]] || die "capoa images with another tag than ${version}: ${stray}"

# Templates: shipped beside the components and in the infrastructure provider's repository folder.
templates=("${dir}"/cluster-template*.yaml)
[[ -f "${templates[0]}" ]] || die "${dir} has no cluster-template*.yaml"
for t in "${templates[@]}"; do
  cmp -s "${t}" "${dir}/repository/infrastructure-agent/${version}/$(basename "${t}")" \
    || die "repository/infrastructure-agent/${version} lacks $(basename "${t}") or has another one"
done
log "ok: ${#templates[@]} cluster templates"

# The managers.
host="$(go env GOHOSTOS)/$(go env GOHOSTARCH)"
work="$(mktemp -d "${TMPDIR:-/tmp}/capoa-verify-release.XXXXXX")"
trap 'rm -rf -- "${work}"' EXIT
for p in infrastructure bootstrap controlplane; do
  for platform in ${platforms}; do
    os="${platform%/*}" arch="${platform#*/}"
    bin="${dir}/bin/${p}-manager-${os}-${arch}"
    [[ -x "${bin}" ]] || die "${bin} is missing"
    info="$(go version -m "${bin}")" || die "go version -m ${bin} failed"
    grep -qP "^\tbuild\tGOOS=${os}$" <<< "${info}" && grep -qP "^\tbuild\tGOARCH=${arch}$" <<< "${info}" \
      || die "${bin} is not built for ${platform}: $(grep -P '^\tbuild\tGO(OS|ARCH)=' <<< "${info}" | tr -s '\t\n' '  ')"
    if [[ "${platform}" == "${host}" ]]; then
      # No cluster to reach: the manager logs its version, then stops on the missing kubeconfig.
      out="$(cd "${work}" && env -u KUBERNETES_SERVICE_HOST -u KUBECONFIG HOME="${work}" \
        timeout 60 "${bin}" --kubeconfig="${work}/none" 2>&1 || true)"
      line="$(grep -m1 '"Starting"' <<< "${out}" || true)"
      [[ -n "${line}" ]] || die "${bin} did not log \"Starting\": ${out}"
      [[ "${line}" == *"version=\"${version}\""* ]] || die "${bin} reports another version: ${line}"
      how="ran it: ${line#*] }"
    else
      grep -aqF -- "${version}" "${bin}" || die "${bin} does not contain ${version}"
      how="contains ${version}"
    fi
    log "ok: $(basename "${bin}"): ${platform}, ${how}"
  done
done
log "${dir} carries ${version} throughout"
