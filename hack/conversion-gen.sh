#!/usr/bin/env bash
# conversion-gen.sh CONVERSION_GEN: writes zz_generated.conversion.go of each older API version
# (`make generate` runs it), converted to and from its group's hub (named in the package's doc.go
# by +k8s:conversion-gen), as Cluster API's are. The control plane's v1alpha2 embeds bootstrap
# v1alpha1's spec and conditions, whose Convert functions conversion-gen finds there
# (--extra-peer-dirs).
#
# What it writes depends only on its inputs (this script, conversion-gen's version, the header,
# the api module's Go files and its pinned modules: go.mod, go.sum), so a copy is kept in the
# cache under their digest and copied back while they are the same: conversion-gen takes about
# 15 s to load the packages in the generated-file check that every `make test-unit` runs, copying
# a hundredth of a second.
# Cache: ${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/capoa}/conversion-gen/<digest>.
set -euo pipefail
cd "$(dirname "$0")/.."

[[ $# -eq 1 ]] || { echo "usage: hack/conversion-gen.sh CONVERSION_GEN" >&2; exit 2; }
conversion_gen="$1"

api_module=github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api
packages=(controlplane/v1alpha2 controlplane/v1alpha3 bootstrap/v1alpha1)
out=zz_generated.conversion.go

inputs() {
  basename "$(dirname "${conversion_gen}")"
  cat "$0" hack/boilerplate.go.txt api/go.mod api/go.sum
  (cd api && find . -name '*.go' ! -name "${out}" -print | LC_ALL=C sort | while read -r f; do
    printf '%s\n' "${f}"
    cat "${f}"
  done)
}
digest="$(inputs | sha256sum | cut -c1-16)"
cache="${CAPOA_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME}/.cache}/capoa}/conversion-gen/${digest}"

# A version no longer listed loses its generated file.
(cd api && find . -name "${out}" -delete)
if [[ -d "${cache}" ]]; then
  for p in "${packages[@]}"; do cp "${cache}/${p}/${out}" "api/${p}/${out}"; done
  exit 0
fi

# conversion-gen logs each field it leaves to a hand-written Convert function (the generated file
# says so too, in WARNING comments): its output is shown only when it fails.
dirs=()
for p in "${packages[@]}"; do dirs+=("./${p}"); done
if ! log="$(cd api && "${conversion_gen}" --go-header-file=../hack/boilerplate.go.txt --output-file="${out}" \
  --extra-peer-dirs="${api_module}/bootstrap/v1alpha1" "${dirs[@]}" 2>&1)"; then
  printf '%s\n' "${log}" >&2
  exit 1
fi

# The cache keeps a copy, written whole or not at all.
mkdir -p "${cache%/*}"
tmp="$(mktemp -d "${cache}.XXXXXX")"
for p in "${packages[@]}"; do mkdir -p "${tmp}/${p}" && cp "api/${p}/${out}" "${tmp}/${p}/${out}"; done
mv -T "${tmp}" "${cache}" 2>/dev/null || rm -rf "${tmp}"
