/*
Copyright 2026 The cluster-api-provider-openshift-assisted Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package assistedservice

import (
	"os"
	"os/exec"
	"path/filepath"
)

// The stand-ins: what assisted-service expects of its container that this machine lacks, each
// the smallest that lets the real code run.

// ocStandIn stands in for the oc client, which assisted-service runs for release information
// (internal/oc/release.go at the pinned commit) and which is not packaged here. What it answers:
//   - `oc adm release info --image-for=NAME ... RELEASE`: the pull spec of the release's
//     component NAME (machine-config-operator, must-gather, okd-rpms), which the service puts in
//     the hosts' steps (container image availability, install). The lab's hosts pull nothing,
//     so a digest derived from the release and the name is enough; the service then knows the
//     image as it would.
//   - anything else (the version or architecture of a release not in RELEASE_IMAGES, extract):
//     it fails, as oc fails to reach a registry: list the release in RELEASE_IMAGES.
const ocStandIn = `#!/bin/sh
# oc stand-in of the lab's assisted-service (test/support/assistedservice/standins.go).
if [ "$1 $2 $3" = "adm release info" ]; then
  name="" release=""
  for a in "$@"; do
    case "$a" in
      --image-for=*) name="${a#--image-for=}" ;;
      -*|adm|release|info) ;;
      *) release="$a" ;;
    esac
  done
  if [ -n "$name" ] && [ -n "$release" ]; then
    digest=$(printf '%s %s' "$release" "$name" | sha256sum | cut -d' ' -f1)
    repo="${release%@*}"
    case "${repo##*/}" in *:*) repo="${repo%:*}" ;; esac
    printf '%s@sha256:%s\n' "$repo" "$digest"
    exit 0
  fi
fi
echo "oc (lab stand-in): cannot run 'oc $*': this lab reaches no release registry; list the release in the service's RELEASE_IMAGES" >&2
exit 1
`

// writeStandIns puts the stand-in programs into dir, which the service finds first on its PATH.
func writeStandIns(dir string) error {
	return os.WriteFile(filepath.Join(dir, "oc"), []byte(ocStandIn), 0o755) //nolint:gosec // a program: it must be executable
}

// inNamespaceFiles is the command that runs bin as in a pod: with its service account's files
// (saDir) at /var/run/secrets/kubernetes.io/serviceaccount, where client-go's in-cluster
// configuration and controller-runtime's leader election (which assisted-service's cmd/main.go
// turns on without a namespace) read them. The files are mounted in a mount namespace of the
// process's own (a tmpfs over /run, which /var/run points to), so the machine's /run is left
// alone; a caller that is not root gets a user namespace too (unshare --map-root-user).
func inNamespaceFiles(saDir, bin string, binArgs ...string) *exec.Cmd {
	args := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		args = append(args, "--map-root-user")
	}
	const script = `set -e
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/secrets/kubernetes.io/serviceaccount
mount --bind "$1" /run/secrets/kubernetes.io/serviceaccount
shift
exec "$@"`
	args = append(args, "sh", "-c", script, "sh", saDir, bin)
	args = append(args, binArgs...)
	return exec.Command("unshare", args...) //nolint:noctx // its lifetime is Stop's
}
