#!/usr/bin/env bash
# verify-fips-binary.sh BINARY...: check that each manager binary was built the way OpenShift's
# FIPS mode needs (make build-fips-<provider>), with the checks openshift/check-payload makes of a
# Go binary (internal/validations/validations.go: validateGoCgo, validateGoTags, validateGoStatic,
# validateGoSymbols, validateGoOpenssl), so that a binary that is not FIPS-capable never carries
# the -fips name:
#   - built with CGO_ENABLED=1, -tags strictfipsruntime and GOEXPERIMENT=strictfipsruntime;
#   - dynamically linked (an ELF interpreter);
#   - holding Red Hat Go's OpenSSL bindings (_goboringcrypto_DLOPEN_OPENSSL) and the name of the
#     libcrypto.so it loads.
# The image's side (that libcrypto.so is in /usr/lib64 of the UBI base) is the base image's.
set -euo pipefail

fail() { echo "verify-fips-binary: $1: $2" >&2; exit 1; }
for bin in "$@"; do
  [[ -f "${bin}" ]] || fail "${bin}" "no such file"
  info="$(go version -m "${bin}")" || fail "${bin}" "not a Go binary"
  grep -qE $'^\tbuild\tCGO_ENABLED=1$' <<< "${info}" || fail "${bin}" "not built with CGO_ENABLED=1"
  grep -qE $'^\tbuild\t-tags=(.*,)?strictfipsruntime(,|$)' <<< "${info}" || fail "${bin}" "not built with -tags strictfipsruntime"
  grep -qE $'^\tbuild\tGOEXPERIMENT=(.*,)?strictfipsruntime(,|$)' <<< "${info}" || fail "${bin}" "not built with GOEXPERIMENT=strictfipsruntime"
  readelf -l "${bin}" | grep -q "program interpreter" || fail "${bin}" "statically linked: it cannot load the system's OpenSSL"
  LC_ALL=C grep -qa '_goboringcrypto_DLOPEN_OPENSSL' "${bin}" || fail "${bin}" "no OpenSSL bindings: not built by Red Hat's Go toolset"
  LC_ALL=C grep -qaE 'libcrypto\.so' "${bin}" || fail "${bin}" "names no libcrypto.so to load"
  echo "verify-fips-binary: ${bin}: ok ($(head -n1 <<< "${info}" | cut -f2))"
done
