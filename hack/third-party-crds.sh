#!/usr/bin/env bash
# third-party-crds.sh CONTROLLER_GEN: writes the third-party CRDs the tests and the lab install,
# all generated or copied from the pinned modules (`make manifests` runs it):
#   - test/support/testenv/crds/<project>: controller-gen's CRDs of the API packages below;
#   - test/support/testenv/hypershift-crds: the agent provider's CRDs as HyperShift installs them
#     over ours (see hack/hypershift-crds/doc.go), not installed by default;
#   - test/support/sim/cvo/crds, test/support/sim/etcd/crds and test/support/sim/machineapi/crds:
#     OpenShift's ClusterVersion, ClusterOperator, etcd operator config and machine.openshift.io
#     Machine, copied from the pinned github.com/openshift/api.
#
# What it writes depends only on its inputs (this script, controller-gen's version, the pinned
# modules: the go.mod and go.sum of test/support and hack/hypershift-crds), so a copy is kept in
# the cache under their digest and copied back while they are the same: generating takes about
# 10 s of the generated-file check that every `make test-unit` runs, copying a tenth of a second.
# Cache: ${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capoa}/third-party-crds/<digest>.
set -euo pipefail
cd "$(dirname "$0")/.."

[[ $# -eq 1 ]] || { echo "usage: hack/third-party-crds.sh CONTROLLER_GEN" >&2; exit 2; }
controller_gen="$1"

# <folder under test/support/testenv/crds>=<API packages, comma-separated>
third_party=(
  "cluster-api=sigs.k8s.io/cluster-api/api/core/v1beta2,sigs.k8s.io/cluster-api/api/runtime/v1beta2"
  "metal3=github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
  "baremetal-operator=github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
  "assisted-service=github.com/openshift/assisted-service/api/v1beta1,github.com/openshift/assisted-service/api/hiveextension/v1beta1"
  "hive=github.com/openshift/hive/apis/hive/v1"
)
# Of Hive's kinds the providers use two (plural names): its other fifteen CRDs (clusterprovisions
# alone is 569 KB) would cost every API server of the tests and the lab CPU to install and test
# nothing.
hive_kinds=(clusterdeployments clusterimagesets)

outputs=(test/support/testenv/crds test/support/testenv/hypershift-crds test/support/sim/cvo/crds test/support/sim/etcd/crds
  test/support/sim/machineapi/crds)

digest="$({ basename "$(dirname "${controller_gen}")"; cat "$0" test/support/go.mod test/support/go.sum \
  hack/hypershift-crds/go.mod hack/hypershift-crds/go.sum; } | sha256sum | cut -c1-16)"
cache="${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/capoa}/third-party-crds/${digest}"

if [[ -d "${cache}" ]]; then
  for o in "${outputs[@]}"; do
    rm -rf "${o}" && mkdir -p "${o%/*}" && cp -R "${cache}/${o}" "${o}"
  done
  exit 0
fi

rm -rf test/support/testenv/crds
for entry in "${third_party[@]}"; do
  name="${entry%%=*}"
  paths=()
  IFS=, read -ra pkgs <<<"${entry#*=}"
  for p in "${pkgs[@]}"; do paths+=("paths=${p}"); done
  (cd test/support && "${controller_gen}" crd:allowDangerousTypes=true "${paths[@]}" "output:crd:artifacts:config=testenv/crds/${name}")
done
keep=()
for k in "${hive_kinds[@]}"; do keep+=(! -name "hive.openshift.io_${k}.yaml"); done
find test/support/testenv/crds/hive -name '*.yaml' "${keep[@]}" -delete
# CAPM3 labels its CRDs with the contract version they implement (its kustomize config does);
# Cluster API's controllers look the label up to resolve Metal3Machine and Metal3Cluster refs.
for f in test/support/testenv/crds/metal3/*.yaml; do
  sed -i '0,/^  name: /s//  labels:\n    cluster.x-k8s.io\/v1beta2: v1beta2\n  name: /' "${f}"
done

# The copy of the agent provider's CRDs that HyperShift installs over ours, labelled as
# `hypershift install` labels it.
rm -rf test/support/testenv/hypershift-crds
(cd hack/hypershift-crds && GOWORK=off "${controller_gen}" crd \
  paths=github.com/openshift/cluster-api-provider-agent/api/v1alpha1 paths=github.com/openshift/cluster-api-provider-agent/api/v1beta1 \
  output:crd:artifacts:config=../../test/support/testenv/hypershift-crds)
for f in test/support/testenv/hypershift-crds/*.yaml; do
  sed -i '0,/^  name: /s//  labels:\n    cluster.x-k8s.io\/v1beta1: v1beta1\n  name: /' "${f}"
done

# OpenShift's ClusterVersion (for the workload cluster of the lab): its Go types carry no CRD
# markers, so the CRD is the manifest the pinned github.com/openshift/api module ships; and
# cluster-etcd-operator's ClusterOperator and its operator config (etcds.operator.openshift.io,
# whose unsupportedConfigOverrides gate new members) for the lab's etcd simulator.
api="$(cd test/support && go list -m -f '{{.Dir}}' github.com/openshift/api)"
mkdir -p test/support/sim/cvo/crds test/support/sim/etcd/crds
cp "${api}/config/v1/0000_00_cluster-version-operator_01_clusterversion.crd.yaml" test/support/sim/cvo/crds/config.openshift.io_clusterversions.yaml
cp "${api}/config/v1/0000_00_cluster-version-operator_01_clusteroperator.crd.yaml" test/support/sim/etcd/crds/config.openshift.io_clusteroperators.yaml
cp "${api}/operator/v1/0000_12_etcd-operator_01_config.crd.yaml" test/support/sim/etcd/crds/operator.openshift.io_etcds.yaml
# The pinned module is of OpenShift 4.12: its ClusterVersion's enums lack the capabilities and the
# baseline sets of later releases, which the clusters the lab installs (4.14 and later) record
# (MachineAPI above all). They get the names of openshift/api 2a3d739 (config/v1/
# types_cluster_version.go: the enum of ClusterVersionCapability without a feature gate, and the
# sets v4.13 to v4.18), as the CRD of those releases has them.
sed -E -i \
  -e 's/^( +)- Storage$/&\n\1- CSISnapshot\n\1- NodeTuning\n\1- MachineAPI\n\1- Build\n\1- DeploymentConfig\n\1- ImageRegistry\n\1- OperatorLifecycleManager\n\1- CloudCredential\n\1- Ingress\n\1- CloudControllerManager\n\1- OperatorLifecycleManagerV1/' \
  -e 's/^( +)- v4[.]12$/&\n\1- v4.13\n\1- v4.14\n\1- v4.15\n\1- v4.16\n\1- v4.17\n\1- v4.18/' \
  test/support/sim/cvo/crds/config.openshift.io_clusterversions.yaml
mkdir -p test/support/sim/machineapi/crds
cp "${api}/machine/v1beta1/0000_10_machine.crd.yaml" test/support/sim/machineapi/crds/machine.openshift.io_machines.yaml
chmod 644 test/support/sim/cvo/crds/*.yaml test/support/sim/etcd/crds/*.yaml test/support/sim/machineapi/crds/*.yaml

# The cache keeps a copy, written whole or not at all.
mkdir -p "${cache%/*}"
tmp="$(mktemp -d "${cache}.XXXXXX")"
for o in "${outputs[@]}"; do
  mkdir -p "${tmp}/${o%/*}" && cp -R "${o}" "${tmp}/${o}"
done
mv -T "${tmp}" "${cache}" 2>/dev/null || rm -rf "${tmp}"
