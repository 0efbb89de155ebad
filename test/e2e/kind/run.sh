#!/usr/bin/env bash
# run.sh [all|up|test|down]: the e2e suite's kind path (make e2e-kind). On a Linux machine with
# Docker, libvirt/KVM and network access it
#   up:   creates a libvirt network and HOSTS UEFI VMs without an OS, starts sushy-tools (the
#         Redfish emulator Ironic drives them through), creates a kind management cluster, installs
#         cert-manager, Ironic and the Bare Metal Operator, assisted-service's infrastructure
#         operator and Hive, builds and loads this repository's provider images, runs
#         `clusterctl init` from hack/release-manifests.sh's local repository, and writes the host
#         inventory of the VMs;
#   test: runs test/e2e (every spec, the same specs and config/e2e.yaml as the lab path, with the
#         config/kind.yaml overlay) against that management cluster and those hosts;
#   down: deletes all of it (unless KEEP=true).
# all (the default) is up, test, then down.
#
# Environment: PULL_SECRET_FILE (required: an OpenShift pull secret, never printed), HOSTS (6: the
# most one spec uses), VM_MEMORY_GIB (16), VM_VCPUS (8), VM_DISK_GIB (120), WORKDIR
# (_artifacts/e2e-kind), KIND_CLUSTER_NAME (capoa-e2e), KEEP (false), GINKGO_LABEL_FILTER (all
# specs), and the versions of versions.env.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
root="$(cd "${here}/../../.." && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=versions.env
source "${here}/versions.env"
export KIND_NODE_IMAGE CERT_MANAGER_VERSION BMO_REF IRONIC_IMAGE ASSISTED_SERVICE_REF HIVE_REF SUSHY_TOOLS_IMAGE

# Every variable the templates use is exported for envsubst (see render).
export KIND_CLUSTER_NAME="${KIND_CLUSTER_NAME:-capoa-e2e}"
export HOSTS="${HOSTS:-6}"
export VM_MEMORY_GIB="${VM_MEMORY_GIB:-16}"
export VM_VCPUS="${VM_VCPUS:-8}"
export VM_DISK_GIB="${VM_DISK_GIB:-120}"
export WORKDIR="${WORKDIR:-${root}/_artifacts/e2e-kind}"
export KEEP="${KEEP:-false}"
export GINKGO_LABEL_FILTER="${GINKGO_LABEL_FILTER:-}"
export PROVISIONING_IP="192.168.111.1"
export LIBVIRT_NETWORK="${KIND_CLUSTER_NAME}"
export LIBVIRT_BRIDGE="capoa-e2e0"
export SUSHY_PORT=8000
export BMC_USERNAME="admin"
export BMC_PASSWORD="password"
export BASE_DOMAIN="e2e.example.com"
export OPENSHIFT_MINOR="4.17"
export RHCOS_VERSION="${RHCOS_VERSION:-417.94.202409121747-0}"
export RHCOS_ISO_URL="${RHCOS_ISO_URL:-https://mirror.openshift.com/pub/openshift-v4/x86_64/dependencies/rhcos/4.17/4.17.0/rhcos-4.17.0-x86_64-live.x86_64.iso}"
export IRONIC_IMAGE_NAME="${IRONIC_IMAGE%:*}"
export IRONIC_IMAGE_TAG="${IRONIC_IMAGE##*:}"
export IMAGE_TAG="e2e"
export RELEASE_VERSION="v0.1.0"

# The variables the templates under test/e2e/kind may use (e2e's TestKindManifestsRender checks
# that every template uses only these, and renders them).
RENDER_VARS="KIND_CLUSTER_NAME KIND_NODE_IMAGE PROVISIONING_IP LIBVIRT_NETWORK LIBVIRT_BRIDGE BASE_DOMAIN VM_NAME VM_MEMORY_GIB VM_VCPUS VM_DISK VM_MAC VM_UUID SUSHY_PORT BMC_USERNAME BMC_PASSWORD BMO_REF IRONIC_IMAGE_NAME IRONIC_IMAGE_TAG ASSISTED_SERVICE_REF HIVE_REF OPENSHIFT_MINOR RHCOS_VERSION RHCOS_ISO_URL"

log() { printf 'e2e-kind: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# render FILE: FILE with the RENDER_VARS substituted (and nothing else: other $ stay as they are).
render() {
  local spec="" v
  for v in ${RENDER_VARS}; do
    spec+="\${${v}} "
  done
  envsubst "${spec}" < "$1"
}

# render_dir DIR OUT: a copy of the kustomization folder DIR in OUT, every file rendered.
render_dir() {
  local f
  mkdir -p "$2"
  for f in "$1"/*; do
    render "${f}" > "$2/$(basename "${f}")"
  done
}

require() {
  local tool
  for tool in "$@"; do
    command -v "${tool}" >/dev/null || die "${tool} is required (see the header of ${BASH_SOURCE[0]})"
  done
}

kubectl_wait_deployments() {
  local ns="$1"
  kubectl --kubeconfig "${KUBECONFIG_PATH}" -n "${ns}" wait --for=condition=Available --timeout=15m deployment --all
}

KUBECONFIG_PATH="${WORKDIR}/management.kubeconfig"

up_hosts() {
  log "libvirt network ${LIBVIRT_NETWORK} and ${HOSTS} VMs"
  render "${here}/libvirt/network.xml" > "${WORKDIR}/network.xml"
  virsh -c qemu:///system net-define "${WORKDIR}/network.xml"
  virsh -c qemu:///system net-start "${LIBVIRT_NETWORK}"
  local inventory="${WORKDIR}/hosts.yaml" i
  printf 'hosts:\n' > "${inventory}"
  for ((i = 0; i < HOSTS; i++)); do
    export VM_NAME="${KIND_CLUSTER_NAME}-host-${i}"
    export VM_MAC VM_DISK="${WORKDIR}/${VM_NAME}.qcow2" VM_UUID
    VM_MAC="$(printf '52:54:00:e2:e0:%02x' "${i}")"
    qemu-img create -q -f qcow2 "${VM_DISK}" "${VM_DISK_GIB}G"
    render "${here}/libvirt/domain.xml" > "${WORKDIR}/${VM_NAME}.xml"
    virsh -c qemu:///system define "${WORKDIR}/${VM_NAME}.xml"
    VM_UUID="$(virsh -c qemu:///system domuuid "${VM_NAME}")"
    render "${here}/manifests/inventory-host.yaml" | grep -v '^#' >> "${inventory}"
  done
  chmod 600 "${inventory}"

  log "sushy-tools on ${PROVISIONING_IP}:${SUSHY_PORT}"
  render "${here}/manifests/sushy-tools.conf" > "${WORKDIR}/sushy-tools.conf"
  docker rm -f "${KIND_CLUSTER_NAME}-sushy-tools" >/dev/null 2>&1 || true
  docker run -d --name "${KIND_CLUSTER_NAME}-sushy-tools" --network host --privileged \
    -v /var/run/libvirt:/var/run/libvirt \
    -v "${WORKDIR}/sushy-tools.conf:/etc/sushy/sushy-emulator.conf:ro" \
    "${SUSHY_TOOLS_IMAGE}" sushy-emulator --config /etc/sushy/sushy-emulator.conf
}

up_management() {
  log "kind cluster ${KIND_CLUSTER_NAME}"
  render "${here}/kind-config.yaml" > "${WORKDIR}/kind-config.yaml"
  kind create cluster --config "${WORKDIR}/kind-config.yaml" --kubeconfig "${KUBECONFIG_PATH}" --wait 5m
  local k=(kubectl --kubeconfig "${KUBECONFIG_PATH}")

  log "cert-manager ${CERT_MANAGER_VERSION}"
  "${k[@]}" apply -f "https://github.com/cert-manager/cert-manager/releases/download/${CERT_MANAGER_VERSION}/cert-manager.yaml"
  kubectl_wait_deployments cert-manager

  log "Ironic and the Bare Metal Operator ${BMO_REF}"
  render_dir "${here}/manifests/ironic" "${WORKDIR}/manifests/ironic"
  render_dir "${here}/manifests/bmo" "${WORKDIR}/manifests/bmo"
  "${k[@]}" create namespace baremetal-operator-system --dry-run=client -o yaml | "${k[@]}" apply -f -
  "${k[@]}" apply -k "${WORKDIR}/manifests/ironic"
  "${k[@]}" apply -k "${WORKDIR}/manifests/bmo"
  kubectl_wait_deployments baremetal-operator-system

  log "Hive ${HIVE_REF}"
  render_dir "${here}/manifests/hive" "${WORKDIR}/manifests/hive"
  "${k[@]}" apply -k "${WORKDIR}/manifests/hive"
  "${k[@]}" wait --for=condition=Established --timeout=5m crd/hiveconfigs.hive.openshift.io
  "${k[@]}" apply -f "${WORKDIR}/manifests/hive/hiveconfig.yaml"
  kubectl_wait_deployments hive

  log "assisted-service's infrastructure operator ${ASSISTED_SERVICE_REF}"
  render_dir "${here}/manifests/assisted" "${WORKDIR}/manifests/assisted"
  "${k[@]}" apply -k "${WORKDIR}/manifests/assisted"
  "${k[@]}" wait --for=condition=Established --timeout=5m crd/agentserviceconfigs.agent-install.openshift.io
  "${k[@]}" apply -f "${WORKDIR}/manifests/assisted/agentserviceconfig.yaml"
  kubectl_wait_deployments assisted-installer

  log "provider images (tag ${IMAGE_TAG}) and clusterctl init"
  make -C "${root}" docker-build IMAGE_TAG="${IMAGE_TAG}"
  local provider
  for provider in infrastructure bootstrap controlplane; do
    kind load docker-image --name "${KIND_CLUSTER_NAME}" "quay.io/openshift-assisted/capoa-${provider}:${IMAGE_TAG}"
  done
  # The script, not make release-manifests: the make target tags the images with RELEASE_VERSION.
  RELEASE_VERSION="${RELEASE_VERSION}" IMAGE_TAG="${IMAGE_TAG}" "${root}/hack/release-manifests.sh" "${WORKDIR}/release"
  local clusterctl_bin
  clusterctl_bin="$("${root}/hack/ensure-tool.sh" clusterctl)"
  "${clusterctl_bin}" init --kubeconfig "${KUBECONFIG_PATH}" --config "${WORKDIR}/release/clusterctl.yaml" \
    --core cluster-api --infrastructure metal3,agent \
    --bootstrap openshift-assisted --control-plane openshift-assisted --wait-providers
}

run_tests() {
  [[ -n "${PULL_SECRET_FILE:-}" && -r "${PULL_SECRET_FILE}" ]] || die "PULL_SECRET_FILE must name a readable OpenShift pull secret"
  log "running test/e2e against ${KIND_CLUSTER_NAME}"
  local args=("-e2e.config=config/e2e.yaml,config/kind.yaml"
    -e2e.management-kubeconfig="${KUBECONFIG_PATH}"
    -e2e.host-inventory="${WORKDIR}/hosts.yaml"
    -e2e.clusterctl-config="${WORKDIR}/release/clusterctl.yaml"
    -e2e.artifacts-folder="${WORKDIR}/artifacts"
    -ginkgo.v)
  if [[ -n "${GINKGO_LABEL_FILTER}" ]]; then
    args+=(-ginkgo.label-filter="${GINKGO_LABEL_FILTER}")
  fi
  (cd "${root}/test/e2e" && E2E_FULL=true PULL_SECRET_FILE="${PULL_SECRET_FILE}" \
    go test -count=1 -timeout 12h . -args "${args[@]}")
}

down() {
  if [[ "${KEEP}" == "true" ]]; then
    log "KEEP=true: leaving kind cluster ${KIND_CLUSTER_NAME}, the VMs and sushy-tools in place"
    return
  fi
  log "deleting kind cluster ${KIND_CLUSTER_NAME}, sushy-tools, the VMs and the libvirt network"
  kind delete cluster --name "${KIND_CLUSTER_NAME}" || true
  docker rm -f "${KIND_CLUSTER_NAME}-sushy-tools" >/dev/null 2>&1 || true
  local i
  for ((i = 0; i < HOSTS; i++)); do
    virsh -c qemu:///system destroy "${KIND_CLUSTER_NAME}-host-${i}" >/dev/null 2>&1 || true
    virsh -c qemu:///system undefine --nvram "${KIND_CLUSTER_NAME}-host-${i}" >/dev/null 2>&1 || true
    rm -f "${WORKDIR}/${KIND_CLUSTER_NAME}-host-${i}.qcow2"
  done
  virsh -c qemu:///system net-destroy "${LIBVIRT_NETWORK}" >/dev/null 2>&1 || true
  virsh -c qemu:///system net-undefine "${LIBVIRT_NETWORK}" >/dev/null 2>&1 || true
}

main() {
  local step="${1:-all}"
  mkdir -p "${WORKDIR}"
  case "${step}" in
    up)
      require docker kind kubectl virsh qemu-img envsubst go make
      up_hosts
      up_management
      ;;
    test)
      require go
      run_tests
      ;;
    down)
      require docker kind virsh
      down
      ;;
    all)
      require docker kind kubectl virsh qemu-img envsubst go make
      trap down EXIT
      up_hosts
      up_management
      run_tests
      ;;
    *) die "unknown step ${step}: use all, up, test or down" ;;
  esac
}

main "$@"
