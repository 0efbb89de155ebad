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

package manager

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// ProviderOptions are a provider's own flags (its setup.Options), beside the shared Options.
type ProviderOptions[P any] interface {
	*P
	AddFlags(fs *pflag.FlagSet)
}

// Main is every provider manager's main, so that main.go is one call: Kubernetes' log setup, the
// shared flags (o) and the provider's own (P), validated; the scheme of the third-party APIs
// and of the provider's API versions (addToScheme); then Run with the provider's setup until
// SIGTERM or SIGINT. It logs what failed and exits 1; a flag it does not know exits 2 with the
// usage, as pflag does.
func Main[P any, PP ProviderOptions[P]](version string, o *Options,
	setup func(context.Context, ctrl.Manager, *Options, P) error, addToScheme ...func(*runtime.Scheme) error) {
	InitLogs()
	log := ctrl.Log.WithName("setup")
	var providerOptions P
	scheme, err := prepare(pflag.CommandLine, os.Args[1:], o, PP(&providerOptions), addToScheme)
	if err != nil {
		// klog, not log: controller-runtime's logger is set by Validate, so it may not be yet.
		klog.ErrorS(err, "Not starting")
		klog.Flush()
		os.Exit(1)
	}
	log.Info("Starting", "version", version)
	if err := Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), o, scheme, SetupWith(setup, providerOptions)); err != nil {
		log.Error(err, "Manager stopped")
		os.Exit(1)
	}
}

// prepare parses args into the shared options and the provider's, validates them and builds
// the scheme.
func prepare(fs *pflag.FlagSet, args []string, o *Options, providerOptions interface{ AddFlags(*pflag.FlagSet) },
	addToScheme []func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	o.AddFlags(fs)
	providerOptions.AddFlags(fs)
	fs.AddGoFlagSet(flag.CommandLine) // klog's flags
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("invalid flags: %w", err)
	}
	scheme, err := capoascheme.New(addToScheme...)
	if err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	return scheme, nil
}
