#!/usr/bin/env bash
# verify-doc-paths.sh: every path of this repository that a Markdown file names exists, so a
# moved or renamed file cannot leave the docs pointing at nothing. It reads the tracked Markdown
# files (not testdata, not the generated API reference) and checks:
#   - every relative link target, [text](path) or [text](path#anchor), from the file's folder;
#   - every `code span` that starts with one of the repository's top-level tracked entries (api/,
#     controlplane/, test/, hack/, docs/, ...), from the root. In a span, <placeholder> and * match
#     anything (`api/<provider>/<version>/conditions.go`), and a trailing .Symbol names a Go
#     identifier the package before it declares (`test/support/pause.SetCluster`). Spans with "..."
#     are left alone.
#   - the same for spans under an abbreviation the file itself declares as "`ic` is `path`"
#     (`ic/agents.go`).
# A path of another repository belongs in a link to that repository, not in a bare span.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t docs < <(git ls-files '*.md' ':!:*/testdata/*' ':!:docs/api-reference/*')
# The top-level entries git tracks: a span that starts with one of them is a path of ours.
tops="$(git ls-files | sed 's|/.*||' | sort -u | tr '\n' ' ')"
fail=0

# exists PATTERN: a file or folder matches PATTERN (a path with <placeholders> and *), or it is
# PACKAGE.Symbol with PACKAGE a folder.
exists() {
	local p="${1%/}"
	while [[ "${p}" =~ (<[^>]*>) ]]; do
		p="${p/"${BASH_REMATCH[1]}"/*}"
	done
	if [[ "${p}" == *'*'* ]]; then
		compgen -G "${p}" >/dev/null && return 0
	elif [[ -e "${p}" ]]; then
		return 0
	fi
	# PACKAGE.Symbol: the package's folder declares Symbol (a func, type, var or const).
	[[ "${p##*/}" =~ ^[a-z0-9_]+\.([A-Z][A-Za-z0-9_]*)$ && -d "${p%.*}" ]] &&
		grep -qsE "^(func|type|var|const) ${BASH_REMATCH[1]}\b|^\s+${BASH_REMATCH[1]}\s+=" "${p%.*}"/*.go
}

report() {
	echo "$1: names $2, which does not exist${3:+ (${3})}" >&2
	fail=1
}

for doc in "${docs[@]}"; do
	dir="$(dirname "${doc}")"
	# Links: [text](target), without URLs, mail and in-page anchors, outside code spans (where
	# Markdown makes no link: a regular expression such as `[a-z]([-a-z]*)` is none).
	while IFS= read -r target; do
		target="${target%%#*}"
		[[ -z "${target}" || "${target}" =~ ^[a-z]+: ]] && continue
		[[ -e "${dir}/${target}" ]] || report "${doc}" "${target}" "a link"
	done < <(sed -E 's/`[^`]*`//g' "${doc}" | grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\((.*)\)$/\1/')

	# Abbreviations the file declares: `ic` is `infrastructure/internal/controllers`.
	declare -A abbrev=()
	while IFS=$'\t' read -r short long; do
		abbrev["${short}"]="${long}"
	done < <(grep -oE '`[a-z]+` is `[A-Za-z0-9_./-]+`' "${doc}" | sed -E 's/^`([a-z]+)` is `([^`]+)`$/\1\t\2/')

	while IFS= read -r span; do
		[[ "${span}" == *...* || "${span}" != */* ]] && continue
		first="${span%%/*}"
		[[ "${first}" =~ ^[A-Za-z0-9_.-]+$ ]] || continue
		path="${span}"
		if [[ -n "${abbrev[${first}]+set}" ]]; then
			path="${abbrev[${first}]}/${span#*/}"
		elif [[ " ${tops} " != *" ${first} "* ]]; then
			continue
		fi
		exists "${path}" || report "${doc}" "${span}"
	done < <(grep -oE '`[^` ]+`' "${doc}" | tr -d '`' | sort -u)
	unset abbrev
done

if [[ "${fail}" -ne 0 ]]; then
	echo "fix the path, or, for another repository's file, link to it there" >&2
fi
exit "${fail}"
