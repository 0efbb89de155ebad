#!/usr/bin/env bash
# verify-workflows.sh [ROOT]: lint the GitHub Actions workflows of ROOT (default: this repository)
# and check that the release workflow builds what the Makefile builds:
#
#   - actionlint (pinned, hack/ensure-tool.sh) on ROOT/.github/workflows/*.yaml, with its shellcheck
#     integration when shellcheck is on PATH (off otherwise);
#   - release.yaml builds one image per provider of the Makefile, each from the Dockerfile the
#     Makefile's DOCKERFILE_<provider> names, for the Makefile's PLATFORMS;
#   - every build arg it passes is an ARG of every Dockerfile;
#   - the tag is the one version: `make release RELEASE_VERSION=<tag>`, the images' tag and their
#     VERSION build arg are all github.ref_name.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd -P)"
root="$(cd "${1:-${here}}" && pwd -P)"
log() { printf 'verify-workflows: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

workflows=("${root}"/.github/workflows/*.y*ml)
[[ -f "${workflows[0]}" ]] || die "no workflow in ${root}/.github/workflows"
release="${root}/.github/workflows/release.yaml"
[[ -f "${release}" ]] || die "${release} is missing"

actionlint="${ACTIONLINT:-$("${here}/hack/ensure-tool.sh" actionlint)}"
args=(-no-color) without=""
command -v shellcheck > /dev/null || { args+=(-shellcheck=); without=", without shellcheck"; }
command -v pyflakes > /dev/null || args+=(-pyflakes=)
(cd "${root}" && "${actionlint}" "${args[@]}" "${workflows[@]}") || die "actionlint found problems"
log "ok: actionlint ($(basename "$(dirname "${actionlint}")")${without}): ${workflows[*]##*/}"

# The Makefile's providers and Dockerfiles, and the release workflow's matrix.
mapfile -t made < <(sed -nE 's/^DOCKERFILE_([a-z]+) := (.+)$/\1 \2/p' "${root}/Makefile" | sort)
mapfile -t matrix < <(awk '
  /^[[:space:]]*- provider:/ { p = $3 } /^[[:space:]]*dockerfile:/ { if (p != "") print p, $2; p = "" }' "${release}" | sort)
(( ${#made[@]} == 3 )) || die "the Makefile names ${#made[@]} Dockerfiles (DOCKERFILE_<provider>), not 3"
[[ "${made[*]}" == "${matrix[*]}" ]] \
  || die "release.yaml builds '${matrix[*]}' (provider dockerfile) but the Makefile has '${made[*]}'"

platforms="$(sed -nE 's/^PLATFORMS \?= (.+)$/\1/p' "${root}/Makefile" | tr ' ' ',')"
grep -qE "^[[:space:]]*platforms: ${platforms}$" "${release}" \
  || die "release.yaml does not build the images for the Makefile's PLATFORMS (${platforms})"

# Build args: each one an ARG of every Dockerfile.
mapfile -t build_args < <(sed -nE 's/^[[:space:]]*build-args: (.+)$/\1/p' "${release}" | tr ' ' '\n' | sed -nE 's/^([A-Za-z_][A-Za-z0-9_]*)=.*/\1/p')
(( ${#build_args[@]} > 0 )) || die "release.yaml passes no build-args (VERSION)"
for entry in "${made[@]}"; do
  dockerfile="${root}/${entry#* }"
  [[ -f "${dockerfile}" ]] || die "${dockerfile} is missing"
  for a in "${build_args[@]}"; do
    grep -qE "^ARG ([A-Za-z_]+ )*${a}([= ]|$)" "${dockerfile}" || die "${dockerfile##*/} has no ARG ${a}, which release.yaml passes"
  done
done

# One Go: the workflows' setup-go builds with the Go of the Dockerfiles' builder image (go.work's
# go line is only the oldest Go the modules accept).
for entry in "${made[@]}"; do
  dockerfile="${root}/${entry#* }"
  v="$(sed -nE 's/^ARG GO_VERSION=(.+)$/\1/p' "${dockerfile}")"
  [[ -n "${v}" ]] || die "${dockerfile##*/} has no ARG GO_VERSION default"
  go_versions+=("${v}")
done
[[ "$(printf '%s\n' "${go_versions[@]}" | sort -u | wc -l)" == 1 ]] || die "the Dockerfiles build with different Go versions: ${go_versions[*]}"
for wf in "${workflows[@]}"; do
  if grep -q "actions/setup-go" "${wf}"; then
    grep -qE "^[[:space:]]*go-version: \"${go_versions[0]}\"$" "${wf}" \
      || die "${wf##*/}: setup-go must set go-version: \"${go_versions[0]}\", the Go of the Dockerfiles (ARG GO_VERSION)"
    ! grep -qE "go-version-file" "${wf}" || die "${wf##*/}: setup-go reads go-version-file; set go-version: \"${go_versions[0]}\" instead"
  fi
done

# One version: the tag.
tag='\$\{\{ github.ref_name \}\}'
grep -qE "^[[:space:]]*RELEASE_VERSION: ${tag}$" "${release}" || die "release.yaml does not set RELEASE_VERSION to the tag"
grep -qE 'make release RELEASE_VERSION="\$\{RELEASE_VERSION\}"' "${release}" || die "release.yaml does not run make release RELEASE_VERSION=<tag>"
grep -qE "^[[:space:]]*build-args: VERSION=${tag}$" "${release}" || die "release.yaml does not pass the tag as the VERSION build arg"
grep -qE "^[[:space:]]*IMAGE: .*/capoa-\\\$\{\{ matrix.provider \}\}:${tag}$" "${release}" || die "release.yaml does not tag the images capoa-<provider>:<tag>"
log "ok: release.yaml builds ${matrix[*]} for ${platforms} with Go ${go_versions[0]} and build args ${build_args[*]}, all versioned by the tag"
