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

package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	bootstrapv1alpha1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha1"
	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1alpha2 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha2"
	controlplanev1alpha3 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	bootstrapsetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/setup"
	controlplanesetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/setup"
	infrasetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/etcd"
)

// ProviderUserAgent is the user agent of a provider that runs as a process (Options.
// ProviderCommand): the API server's audit log tells the providers' requests apart by it.
func ProviderUserAgent(provider string) string { return "capoa-" + provider + "-manager" }

// RunProviderProcess runs the provider named (infrastructure, bootstrap or controlplane) in this
// process until it is sent SIGTERM, as its main.go does: the same manager options and defaults,
// provider flags and scheme, with args as its command line and the management cluster from
// $KUBECONFIG. Only the control plane's etcd connector differs: it answers as the etcd of
// healthy single-node clusters (etcd.SingleMembers), since the etcd of a process's workload
// clusters cannot be the lab's in-process simulator. The command that Options.ProviderCommand
// returns calls it (a test binary that runs itself again, see test/fleet).
func RunProviderProcess(name string, args []string) error {
	manager.InitLogs()
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	var (
		opts   *manager.Options
		setup  manager.SetupFunc
		scheme *runtime.Scheme
		err    error
	)
	switch name {
	case "infrastructure":
		opts = infrasetup.NewManagerOptions()
		opts.AddFlags(fs)
		var po infrasetup.Options
		po.AddFlags(fs)
		scheme, err = capoascheme.New(infrav1.AddToScheme)
		if err == nil {
			err = fs.Parse(args)
			setup = manager.SetupWith(infrasetup.Setup, po)
		}
	case "bootstrap":
		opts = bootstrapsetup.NewManagerOptions()
		opts.AddFlags(fs)
		var po bootstrapsetup.Options
		po.AddFlags(fs)
		scheme, err = capoascheme.New(bootstrapv1.AddToScheme, bootstrapv1alpha1.AddToScheme)
		if err == nil {
			err = fs.Parse(args)
			setup = manager.SetupWith(bootstrapsetup.Setup, po)
		}
	case "controlplane":
		opts = controlplanesetup.NewManagerOptions()
		opts.AddFlags(fs)
		var po controlplanesetup.Options
		po.AddFlags(fs)
		scheme, err = capoascheme.New(bootstrapv1.AddToScheme, controlplanev1.AddToScheme, controlplanev1alpha3.AddToScheme, controlplanev1alpha2.AddToScheme)
		if err == nil {
			err = fs.Parse(args)
			members := &etcd.SingleMembers{}
			defer members.Stop()
			po.EtcdConnector = members
			setup = manager.SetupWith(controlplanesetup.Setup, po)
		}
	default:
		return fmt.Errorf("no provider %q", name)
	}
	if err != nil {
		return fmt.Errorf("the %s provider's flags or scheme: %w", name, err)
	}
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("the %s provider's flags: %w", name, err)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("reading $KUBECONFIG: %w", err)
	}
	cfg.UserAgent = ProviderUserAgent(name)
	return manager.Run(ctrl.SetupSignalHandler(), cfg, opts, scheme, setup)
}

// processArgs are the flags of a provider run as a process: its defaults, but for the addresses
// that several managers on one machine would share, the lab's webhook server, and the control
// plane's own options cp (release registry, in-place updates).
func processArgs(p provider, healthAddr string, webhookPort int, webhookCertDir string, cp controlplanesetup.Options) []string {
	args := []string{"--health-addr=" + healthAddr, "--diagnostics-address=0", "--insecure-diagnostics",
		"--webhook-port=" + strconv.Itoa(webhookPort)}
	if webhookCertDir != "" {
		args = append(args, "--webhook-cert-dir="+webhookCertDir)
	}
	if p.name == "controlplane" {
		args = append(args, "--allowed-release-registries="+strings.Join(cp.AllowedReleaseRegistries, ","), "--release-registry-ca-file="+cp.ReleaseRegistryCAFile,
			"--"+controlplanesetup.InPlaceUpdatesFlag+"="+strconv.FormatBool(cp.InPlaceUpdates),
			"--"+controlplanesetup.InPlaceUpdatesClientCAFlag+"="+cp.InPlaceUpdatesClientCAFile)
	}
	return args
}

// startProcess starts a provider's process; stopProcess, run until ctx ends, then stops it.
func (l *Lab) startProcess(p provider, kubeconfig string, args []string) (*exec.Cmd, <-chan error, error) {
	cmd := l.opts.ProviderCommand(p.name, args)
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+kubeconfig)
	if cmd.Stdout == nil {
		log, err := os.Create(filepath.Join(filepath.Dir(kubeconfig), p.name+".log"))
		if err != nil {
			return nil, nil, fmt.Errorf("creating the %s provider's log: %w", p.name, err)
		}
		defer log.Close() // the process has its own descriptor
		cmd.Stdout, cmd.Stderr = log, log
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting the %s provider's process: %w", p.name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, done, nil
}

// waitReady waits until the provider's process answers its readiness probe (/readyz: its webhook
// server serves), as the kubelet waits before a Service sends a pod requests; at most 3 minutes.
func waitReady(ctx context.Context, p provider, healthAddr string, done <-chan error) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+healthAddr+"/readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-done:
			return fmt.Errorf("the %s provider's process exited before it was ready: %w", p.name, err)
		case <-ctx.Done():
			return fmt.Errorf("the %s provider's process is not ready after 3 minutes", p.name)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stopProcess waits until ctx ends, then stops the provider's process as the kubelet stops a
// container: SIGTERM, and SIGKILL after 30 s. A process that exits on its own is an error.
func stopProcess(ctx context.Context, p provider, cmd *exec.Cmd, done <-chan error) error {
	select {
	case err := <-done:
		return fmt.Errorf("the %s provider's process exited: %w", p.name, err)
	case <-ctx.Done():
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			return fmt.Errorf("stopping the %s provider's process: %w", p.name, err)
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		killed := <-done
		return fmt.Errorf("the %s provider's process did not stop in 30 s after SIGTERM (killed: %v)", p.name, killed)
	}
}
