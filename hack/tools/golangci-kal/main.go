// Command golangci-kal is golangci-lint v2 with the Kube API Linter (KAL,
// sigs.k8s.io/kube-api-linter) compiled in as a module plugin: the binary
// that `golangci-lint custom` would produce, built without cloning anything.
//
// Build it with hack/ensure-lint.sh (once, cached outside the repo). It runs
// both lint configurations: .golangci.yml (no plugin) and .golangci-kal.yml,
// which enables the plugin as linters.settings.custom.kubeapilinter with
// `type: module`.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/golangci/golangci-lint/v2/pkg/commands"
	"github.com/golangci/golangci-lint/v2/pkg/exitcodes"

	// KAL's root package registers the "kubeapilinter" module plugin in the
	// plugin-module-register registry (from an init function), where
	// golangci-lint looks up every custom linter of type "module".
	_ "sigs.k8s.io/kube-api-linter"
)

const (
	golangciModule = "github.com/golangci/golangci-lint/v2"
	kalModule      = "sigs.k8s.io/kube-api-linter"
)

func main() {
	if err := commands.Execute(buildInfo()); err != nil {
		fmt.Fprintf(os.Stderr, "golangci-kal: %v\n", err)
		os.Exit(exitcodes.Failure)
	}
}

// buildInfo reports the pinned golangci-lint and KAL versions (this module's
// requirements), as `golangci-kal version` shows. golangci-lint salts its
// analysis cache with the version: naming KAL's version in it too means that
// a new pin of either never reuses results cached by the previous binary.
func buildInfo() commands.BuildInfo {
	info := commands.BuildInfo{Version: "unknown", Commit: "golangci-kal", Date: "(unknown)", GoVersion: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	info.GoVersion = bi.GoVersion
	var golangci, kal string
	for _, dep := range bi.Deps {
		switch dep.Path {
		case golangciModule:
			golangci = strings.TrimPrefix(dep.Version, "v")
		case kalModule:
			kal = dep.Version
		}
	}
	if golangci != "" {
		info.Version = golangci + "+kube-api-linter." + kal
	}
	return info
}
