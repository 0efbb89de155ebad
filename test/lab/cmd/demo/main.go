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

// Command demo runs the simulated bare-metal lab and creates an OpenShift cluster in it, showing
// its progress, then exits 0 once the cluster is available (make demo).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/metal3-io/baremetal-operator/inprocess"
	"golang.org/x/term"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

func main() {
	flavor := flag.String("flavor", "multinode", "cluster to create: multinode (3 control planes, 2 workers on Metal3 hosts booting the discovery ISO), image (the same, booting an RHCOS disk image), disconnected (the same, reading OpenShift through a mirror with credentials and its own CA), sno (one Metal3 host), agent (3 control planes, 2 workers on self-booted hosts claimed by AgentMachines) or agent-sno (one self-booted host claimed by an AgentMachine)")
	speed := flag.String("speed", string(lab.Fast), "simulated step speed: fast or realistic")
	keep := flag.Bool("keep", false, "keep the lab running once the cluster is available, until interrupted")
	timeout := flag.Duration("timeout", 15*time.Minute, "give up after this long")
	out := flag.String("out", "_artifacts/demo", "folder for the kubeconfigs")
	hosts := flag.Int("hosts", 0, "spare hosts beyond the cluster's, available to scale its MachineDeployment up (BareMetalHosts, or self-booted hosts for the agent and agent-sno flavors)")
	labKind := flag.String("lab", "", "which lab: real (assisted-service at the commit test/support/assistedservice pins, with PostgreSQL, and the baremetal-operator at the version test/support/baremetaloperator pins) or sim (their simulators); empty: the lab the flavor needs (real, but for disconnected)")
	newestCRDs := flag.Bool("newest-crds", false, "run the lab on the newest assisted-service and Hive CRDs their repositories publish (test/support/testenv/crds-newest), as a hub with the newest multicluster engine serves them, instead of those generated from the pinned Go modules")
	verbose := flag.Bool("v", false, "show the controllers' logs")
	flag.Parse()

	if *verbose {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *flavor, lab.Speed(*speed), *keep, *timeout, *out, *hosts, *newestCRDs, *labKind)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, flavor string, speed lab.Speed, keep bool, timeout time.Duration, out string, spare int, newestCRDs bool, labKind string) error {
	o, err := flavorOptions(flavor)
	if err != nil {
		return err
	}
	if speed != lab.Fast && speed != lab.Realistic {
		return fmt.Errorf("unknown speed %q: use fast or realistic", speed)
	}
	opts, err := labOptions(flavor, labKind, newestCRDs)
	if err != nil {
		return err
	}
	opts.Speed, opts.ClusterctlInventory = speed, true
	if spare < 0 {
		return fmt.Errorf("--hosts=%d: the number of spare hosts cannot be negative", spare)
	}
	start := time.Now()
	fmt.Printf("Starting the %s lab (management and workload API servers, Cluster API, CAPM3, the providers, %s)...\n", labName(opts), components(opts))
	// A clusterctl management cluster: the providers running in-process are in clusterctl's
	// inventory (lab.Options.ClusterctlInventory says why it is written, not installed).
	l, err := lab.Start(ctx, opts)
	if err != nil {
		return err
	}
	if l.AssistedService != nil {
		fmt.Printf("assisted-service: the real one, %s (github.com/openshift/assisted-service), at %s\n", l.AssistedService.Version, l.AssistedService.URL)
	} else {
		fmt.Printf("assisted-service: the simulator (test/support/sim/assisted)\n")
	}
	if opts.BareMetal == lab.BareMetalReal {
		fmt.Printf("baremetal-operator: the real one, %s (github.com/metal3-io/baremetal-operator), the lab's hosts as its Ironic\n", inprocess.Version)
	} else {
		fmt.Printf("baremetal-operator: the simulator (test/support/sim/baremetal)\n")
	}
	defer func() { _ = l.Stop() }()
	template, err := o.Template()
	if err != nil {
		return err
	}
	// The management cluster can be watched from another shell while the cluster installs.
	mgmtKubeconfig, err := writeManagementKubeconfig(l, out)
	if err != nil {
		return err
	}
	fmt.Printf("Lab ready in %s. Management cluster kubeconfig: %s\n", time.Since(start).Round(time.Millisecond), mgmtKubeconfig)
	fmt.Printf("Watch the install from another shell:\n  KUBECONFIG=%s clusterctl describe cluster %s -n %s\n  KUBECONFIG=%s kubectl get clusters,machines,baremetalhosts,agents -n %s\n",
		mgmtKubeconfig, o.Name, o.Namespace, mgmtKubeconfig, o.Namespace)
	fmt.Printf("It is a clusterctl management cluster (after make release-manifests, which writes out/clusterctl.yaml):\n  KUBECONFIG=%s clusterctl upgrade plan --config out/clusterctl.yaml\n",
		mgmtKubeconfig)
	fmt.Printf("Creating %s cluster %q (OpenShift %s) from %s.\n", flavor, o.Name, o.Version, filepath.Base(template))

	c := l.Mgmt.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: ctrlObjectMeta(o.Namespace)}); err != nil {
		return err
	}
	// The hosts the cluster needs, and the spare ones a scale-up claims.
	n := int(o.ControlPlanes+o.Workers) + spare
	if o.Infrastructure == lab.Agent {
		if err := l.AddSelfBootedHosts("host", n); err != nil {
			return err
		}
	} else if _, err := l.AddHosts(ctx, o.Namespace, "host", n); err != nil {
		return err
	}
	if spare > 0 {
		fmt.Printf("%d spare host(s) beyond the cluster's %d.\n", spare, o.ControlPlanes+o.Workers)
	}
	if err := l.CreateCluster(ctx, o); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	show := newProgress(os.Stdout)
	ticker := time.NewTicker(500 * time.Millisecond)
	defer ticker.Stop()
	var last lab.Snapshot
	for {
		snap, err := l.Snapshot(ctx, o.Namespace)
		if err == nil {
			show.update(snap)
			last = snap
		}
		available, err := controlPlaneAvailable(ctx, c, o)
		if err != nil {
			return err
		}
		if available {
			break
		}
		if err := l.Err(); err != nil {
			return fmt.Errorf("a controller stopped: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cluster is not available after %s; where it is stuck:\n%s", timeout, last)
		case <-ticker.C:
		}
	}
	fmt.Printf("\nCluster %q is available after %s.\n", o.Name, time.Since(start).Round(time.Second))
	workloadKubeconfig, err := writeWorkloadKubeconfig(ctx, l, o, out)
	if err != nil {
		return err
	}
	fmt.Printf("Workload cluster kubeconfig: %s\nManagement cluster kubeconfig: %s\n", workloadKubeconfig, mgmtKubeconfig)
	if keep {
		fmt.Printf("The lab keeps running: try KUBECONFIG=%s kubectl get clusters,machines,agents -A. Ctrl-C stops it.\n", mgmtKubeconfig)
		if o.Workers > 0 && spare > 0 {
			fmt.Printf("Scale the workers up onto the spare hosts:\n  KUBECONFIG=%s kubectl scale machinedeployment %s-worker -n %s --replicas=%d\n",
				mgmtKubeconfig, o.Name, o.Namespace, int(o.Workers)+spare)
		}
		<-ctx.Done()
	}
	return nil
}

func controlPlaneAvailable(ctx context.Context, c client.Client, o lab.ClusterOptions) (bool, error) {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, cp); err != nil {
		return false, err
	}
	for _, cond := range cp.Status.Conditions {
		if cond.Type == "Available" && cond.Status == "True" {
			return cp.Status.ReadyReplicas != nil && *cp.Status.ReadyReplicas == o.ControlPlanes, nil
		}
	}
	return false, nil
}

// writeManagementKubeconfig writes the management cluster's kubeconfig into out, as an absolute
// path that works from any folder.
func writeManagementKubeconfig(l *lab.Lab, out string) (string, error) {
	if err := os.MkdirAll(out, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", out, err)
	}
	path, err := filepath.Abs(filepath.Join(out, "management.kubeconfig"))
	if err != nil {
		return "", fmt.Errorf("locating the management kubeconfig: %w", err)
	}
	if err := l.Mgmt.WriteKubeconfig(path); err != nil {
		return "", fmt.Errorf("writing the management kubeconfig: %w", err)
	}
	return path, nil
}

// writeWorkloadKubeconfig writes the workload cluster's kubeconfig (from the <cluster>-kubeconfig
// Secret the control plane wrote) into out.
func writeWorkloadKubeconfig(ctx context.Context, l *lab.Lab, o lab.ClusterOptions, out string) (string, error) {
	secret := &corev1.Secret{}
	if err := l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name + "-kubeconfig"}, secret); err != nil {
		return "", fmt.Errorf("reading the workload kubeconfig Secret: %w", err)
	}
	path, err := filepath.Abs(filepath.Join(out, o.Name+".kubeconfig"))
	if err != nil {
		return "", fmt.Errorf("locating the workload kubeconfig: %w", err)
	}
	if err := os.WriteFile(path, secret.Data["value"], 0o600); err != nil {
		return "", fmt.Errorf("writing the workload kubeconfig: %w", err)
	}
	return path, nil
}

// progress shows snapshots: a table redrawn in place on a terminal, else a line per change.
type progress struct {
	w        io.Writer
	terminal bool
	lines    int
	seen     map[string]bool
}

func newProgress(f *os.File) *progress {
	return &progress{w: f, terminal: term.IsTerminal(int(f.Fd())), seen: map[string]bool{}}
}

func (p *progress) update(s lab.Snapshot) {
	if p.terminal {
		if p.lines > 0 {
			fmt.Fprintf(p.w, "\x1b[%dA\x1b[J", p.lines)
		}
		width := 160
		for _, line := range s.Lines {
			if len(line) > width {
				line = line[:width-1] + "…"
			}
			fmt.Fprintln(p.w, line)
		}
		p.lines = len(s.Lines)
		return
	}
	for _, line := range s.Lines {
		if !p.seen[line] {
			p.seen[line] = true
			fmt.Fprintf(p.w, "%s %s\n", time.Now().Format("15:04:05.000"), strings.TrimSpace(line))
		}
	}
}

func ctrlObjectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
