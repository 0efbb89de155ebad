#!/usr/bin/env bash
# release-version.sh VERSION: exit 0 when VERSION can be released, else say why and exit 1.
#
# A release version is a semantic version with a leading v (v0.1.0, v0.2.0-rc.1) whose release
# series (major.minor) metadata.yaml maps to a Cluster API contract: clusterctl and the Cluster API
# Operator refuse a release whose series metadata.yaml lacks. `make release` runs this before it
# builds anything; hack/verify-release.sh runs it again on what was written.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd -P)"
die() { printf 'release-version: ERROR: %s\n' "$*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: $0 VERSION"
version="$1"
[[ -n "${version}" ]] || die "no release version: pass RELEASE_VERSION=vX.Y.Z or tag HEAD with one (git tag vX.Y.Z)"
[[ "${version}" =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] \
  || die "'${version}' is not a semantic version such as v0.1.0 or v0.2.0-rc.1"
major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"
metadata="${METADATA:-${root}/metadata.yaml}"
awk -v M="${major}" -v m="${minor}" '
  /^- major:/ { maj = $3 } /^  minor:/ { if (maj == M && $2 == m) found = 1 }
  END { exit found ? 0 : 1 }' "${metadata}" \
  || die "${metadata} has no release series ${major}.${minor} for ${version}: add one (major, minor, contract) before releasing"
