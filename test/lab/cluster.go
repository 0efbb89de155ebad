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
	_ "embed"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/validationtest"
)

// Infrastructure is what a cluster's hosts are.
type Infrastructure string

const (
	// Metal3 hosts are BareMetalHosts that CAPM3 provisions with the discovery ISO.
	Metal3 Infrastructure = "metal3"
	// Agent hosts are booted from the discovery ISO by a person (see AddSelfBootedHosts); the
	// infrastructure provider's AgentMachines claim their Agents.
	Agent Infrastructure = "agent"
)

// ClusterOptions describe an OpenShift cluster, as a user would generate it with
// `clusterctl generate cluster` from this repository's templates.
type ClusterOptions struct {
	Namespace, Name string
	// ControlPlanes is the number of control-plane nodes: 1 (single-node OpenShift, the sno
	// flavor, or agent-sno on self-booted hosts), 2 (with Arbiter), 3, 4 or 5.
	ControlPlanes int32
	// Arbiter makes two-node OpenShift with an arbiter (the arbiter flavor): its arbiter host is
	// the BareMetalHost labelled ArbiterHostLabel=true, and the hub's assisted-service must
	// support arbiter clusters (Options.NewestCRDs, or testenv.UseNewestCRDs on a running lab).
	Arbiter bool
	// Fencing makes two-node OpenShift with fencing (spec.fencing on the default Metal3 flavor's
	// control plane, ControlPlanes 2): each host's fencing credentials are its BareMetalHost's, and
	// the hub's assisted-service must support it (Options.NewestCRDs). No flavor offers it yet.
	Fencing bool
	// Workers is the number of worker nodes, in a MachineDeployment named <name>-worker.
	Workers int32
	// Version is the OpenShift version (distributionVersion).
	Version string
	// BaseDomain defaults to lab.example.com.
	BaseDomain string
	// Infrastructure defaults to Metal3.
	Infrastructure Infrastructure
	// Upstream writes the control plane and the workers' config template as
	// cluster-api-provider-openshift-assisted v0.4.0's multinode example does, at the versions
	// that release stores (upstream/cluster-template-v0.4.0.yaml): they reach the providers
	// through the conversion webhooks. Metal3 clusters only.
	Upstream bool
	// DiskImage makes the hosts boot an RHCOS disk image (RHCOSImageURL) with the discovery
	// ignition as bootstrap data, rather than the discovery ISO: the image flavor, multinode on
	// Metal3 only.
	DiskImage bool
	// Disconnected makes a cluster of a site that pulls OpenShift from a mirror (the disconnected
	// flavor): its control plane names OpenShift's repository on quay.io, unreachable from the lab,
	// and its image registry ConfigMap (<name>-mirror-config, which the lab creates as a user would)
	// mirrors it to the lab's registry and trusts the registry's CA. Metal3, 3 to 5 control-plane
	// nodes.
	Disconnected bool
	// Topology makes the cluster a Cluster API managed topology of ClusterClass openshift-metal3,
	// or openshift-agent with Infrastructure Agent (with the class as clusterctl adds it), whose
	// spec.topology.version is the Kubernetes version of Version's release: the topology and
	// agent-topology flavors for 3 to 5 control-plane nodes, sno-topology and agent-sno-topology for
	// one, arbiter-topology (Metal3) with Arbiter. The lab must run the topology controllers
	// (Options.Topology).
	Topology bool
	// IPStack is the IP families of the cluster's networks: IPv4 (the default), IPv6 or
	// DualStack, on the lab's hosts, which have an address of each family
	// (inventory.IPv6Subnet).
	IPStack IPStack
	// AutomatedCleaningMode is the Metal3 hosts' disk cleaning (AUTOMATED_CLEANING_MODE: the
	// flavors' default is disabled; metadata has Ironic wipe a host's disk when it is
	// deprovisioned, and before its first deploy).
	AutomatedCleaningMode string
}

// IPStack is the IP families of a cluster.
type IPStack string

const (
	// IPv4 is a single-stack IPv4 cluster, the templates' default.
	IPv4 IPStack = ""
	// IPv6 is a single-stack IPv6 cluster: the default flavor with IPv6 pod and service networks
	// and VIPs (POD_CIDR, SERVICE_CIDR, API_VIP, INGRESS_VIP), without machine networks, which
	// assisted-service takes from the hosts' network that holds the API VIP.
	IPv6 IPStack = "IPv6"
	// DualStack is a dual-stack cluster, IPv4 first: the default flavor with a second, IPv6 pod
	// network, service network and pair of VIPs, and the hosts' IPv4 and IPv6 networks as the
	// control plane's machineNetworks, as a user edits the generated cluster.
	DualStack IPStack = "DualStack"
)

// The lab's IPv6 networks: the pod and service networks are assisted-service's IPv6 defaults
// (CLUSTER_NETWORK_CIDR_IPV6, SERVICE_NETWORK_CIDR_IPV6), the VIPs in the hosts' network.
const (
	ipv6PodCIDR     = "fd01::/48"
	ipv6ServiceCIDR = "fd02::/112"
	ipv6APIVIP      = "fd2e:6f44:5dd8:c956::5"
	ipv6IngressVIP  = "fd2e:6f44:5dd8:c956::4"
	ipv4MachineCIDR = "192.168.111.0/24"
)

// topologyClassFile is the file, in templates/, of the ClusterClass of o's topology flavor.
func (o ClusterOptions) topologyClassFile() string {
	if o.Infrastructure == Agent {
		return "clusterclass-openshift-agent.yaml"
	}
	return "clusterclass-openshift-metal3.yaml"
}

// RHCOSImageURL is the RHCOS disk image of the lab's image flavor: a Nutanix qcow2, whose Ignition
// reads the config drive, as the image flavor needs.
func (o ClusterOptions) RHCOSImageURL() string {
	return fmt.Sprintf("https://rhcos.lab.sim/rhcos-%s-x86_64-nutanix.x86_64.qcow2", o.Version)
}

// ArbiterHostLabel is the label of the BareMetalHost the arbiter flavor picks for the arbiter
// (its ARBITER_HOST_LABEL default), with the value "true".
const ArbiterHostLabel = "openshift-assisted.io/arbiter"

const (
	apiVIP     = "192.168.111.5"
	ingressVIP = "192.168.111.4"
)

// Template returns the path of the cluster template (templates/) that o is generated from: for
// self-booted hosts the agent-sno flavor for one control-plane node, the agent flavor otherwise;
// on Metal3 the arbiter flavor with Arbiter, the sno flavor for one control-plane node, the
// default otherwise; with Topology, their topology flavors (see Topology). The sno and agent-sno
// flavors have no workers (their topology flavors may).
func (o ClusterOptions) Template() (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	name := "cluster-template.yaml"
	switch {
	case o.Infrastructure == Agent && o.Topology && o.Arbiter:
		return "", fmt.Errorf("ClusterClass openshift-agent offers no arbiter: use Metal3")
	case o.Infrastructure == Agent && o.Topology && o.ControlPlanes == 1:
		name = "cluster-template-agent-sno-topology.yaml"
	case o.Infrastructure == Agent && o.Topology:
		name = "cluster-template-agent-topology.yaml"
	case o.Infrastructure == Agent && o.ControlPlanes == 1:
		if o.Workers > 0 {
			return "", fmt.Errorf("the agent-sno flavor has no workers")
		}
		name = "cluster-template-agent-sno.yaml"
	case o.Infrastructure == Agent:
		name = "cluster-template-agent.yaml"
	case o.Infrastructure != "" && o.Infrastructure != Metal3:
		return "", fmt.Errorf("unknown infrastructure %q: use %s or %s", o.Infrastructure, Metal3, Agent)
	case o.DiskImage:
		if o.ControlPlanes == 1 || o.Arbiter {
			return "", fmt.Errorf("the image flavor has 3, 4 or 5 control-plane nodes")
		}
		name = "cluster-template-image.yaml"
	case o.Disconnected:
		if o.ControlPlanes == 1 || o.Arbiter {
			return "", fmt.Errorf("the disconnected flavor has 3, 4 or 5 control-plane nodes")
		}
		name = "cluster-template-disconnected.yaml"
	case o.Topology && o.Arbiter:
		if o.ControlPlanes != 2 {
			return "", fmt.Errorf("the arbiter-topology flavor has 2 control-plane nodes")
		}
		name = "cluster-template-arbiter-topology.yaml"
	case o.Topology && o.ControlPlanes == 1:
		name = "cluster-template-sno-topology.yaml"
	case o.Topology:
		name = "cluster-template-topology.yaml"
	case o.Fencing && (o.Arbiter || o.Topology || o.DiskImage || o.Disconnected || o.ControlPlanes != 2):
		return "", fmt.Errorf("two-node OpenShift with fencing is the default Metal3 flavor with 2 control-plane nodes and spec.fencing")
	case o.Arbiter:
		name = "cluster-template-arbiter.yaml"
	case o.ControlPlanes == 1:
		if o.Workers > 0 {
			return "", fmt.Errorf("the sno flavor has no workers")
		}
		name = "cluster-template-sno.yaml"
	}
	return filepath.Join(root, "templates", name), nil
}

// variables are the template variables of o (docs/getting-started.md lists them).
func (o ClusterOptions) variables() map[string]string {
	vars := map[string]string{
		"CLUSTER_NAME":                o.Name,
		"NAMESPACE":                   o.Namespace,
		"CONTROL_PLANE_MACHINE_COUNT": strconv.Itoa(int(o.ControlPlanes)),
		"WORKER_MACHINE_COUNT":        strconv.Itoa(int(o.Workers)),
		"OPENSHIFT_VERSION":           o.Version,
		"KUBERNETES_VERSION":          "v" + Releases[o.Version],
		"BASE_DOMAIN":                 o.BaseDomain,
		"API_VIP":                     apiVIP,
		"INGRESS_VIP":                 ingressVIP,
		"PULL_SECRET_NAME":            o.Name + "-pull-secret",
		"SSH_AUTHORIZED_KEY":          validationtest.SSHKey,
		"RHCOS_IMAGE_URL":             o.RHCOSImageURL(),
		"RHCOS_IMAGE_CHECKSUM":        "https://rhcos.lab.sim/sha256sum.txt",
		"MIRROR_CONFIG_NAME":          o.Name + "-mirror-config",
	}
	if o.AutomatedCleaningMode != "" {
		vars["AUTOMATED_CLEANING_MODE"] = o.AutomatedCleaningMode
	}
	if o.IPStack == IPv6 {
		vars["POD_CIDR"], vars["SERVICE_CIDR"] = ipv6PodCIDR, ipv6ServiceCIDR
		vars["API_VIP"], vars["INGRESS_VIP"] = ipv6APIVIP, ipv6IngressVIP
	}
	return vars
}

// dualStack adds to the Cluster and control plane of objs the IPv6 networks and VIPs, and the
// machine networks, of a dual-stack cluster (DualStack).
func dualStack(objs []client.Object) error {
	found := 0
	for _, obj := range objs {
		switch o := obj.(type) {
		case *clusterv1.Cluster:
			o.Spec.ClusterNetwork.Pods.CIDRBlocks = append(o.Spec.ClusterNetwork.Pods.CIDRBlocks, ipv6PodCIDR)
			o.Spec.ClusterNetwork.Services.CIDRBlocks = append(o.Spec.ClusterNetwork.Services.CIDRBlocks, ipv6ServiceCIDR)
			found++
		case *controlplanev1.OpenshiftAssistedControlPlane:
			c := &o.Spec.Config
			c.APIVIPs, c.IngressVIPs = append(c.APIVIPs, ipv6APIVIP), append(c.IngressVIPs, ipv6IngressVIP)
			c.MachineNetworks = []string{ipv4MachineCIDR, inventory.IPv6Subnet}
			found++
		}
	}
	if found != 2 {
		return fmt.Errorf("dual stack needs a flavor with a Cluster and a control plane of this repository's types (not Upstream)")
	}
	return nil
}

// ClusterObjects returns the objects of the cluster o, rendered from the repository's cluster
// template with clusterctl's own template processor, as `clusterctl generate cluster` renders
// them, plus the pull secret a user creates first, adapted to the lab (Adapt).
func (l *Lab) ClusterObjects(o ClusterOptions) ([]client.Object, error) {
	if o.BaseDomain == "" {
		o.BaseDomain = "lab.example.com"
	}
	path, err := o.Template()
	if err != nil {
		return nil, err
	}
	template, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster template: %w", err)
	}
	if o.Topology {
		// As clusterctl adds a missing ClusterClass from the provider's repository, before the Cluster.
		class, err := os.ReadFile(filepath.Join(filepath.Dir(path), o.topologyClassFile()))
		if err != nil {
			return nil, fmt.Errorf("reading the ClusterClass: %w", err)
		}
		template = append(append(class, []byte("\n---\n")...), template...)
	}
	vars := o.variables()
	rendered, err := yamlprocessor.NewSimpleProcessor().Process(template, func(k string) (string, error) {
		if v, ok := vars[k]; ok {
			return v, nil
		}
		return "", fmt.Errorf("variable %s is not set", k)
	})
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", filepath.Base(path), err)
	}
	items, err := utilyaml.ToUnstructured(rendered)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", filepath.Base(path), err)
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	objs := []client.Object{&corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: vars["PULL_SECRET_NAME"],
			// clusterctl move takes a user's Secret along only when labelled so (docs/getting-started.md).
			Labels: map[string]string{clusterv1.ClusterNameLabel: o.Name, clusterctlv1.ClusterctlMoveLabel: ""}},
		Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: l.PullSecret()},
	}}
	repository := l.Releases.Repository()
	if o.Disconnected {
		// The control plane names quay.io; its mirrors send it to the lab's registry.
		repository = ""
		objs = append(objs, l.mirrorConfig(o.Namespace, vars["MIRROR_CONFIG_NAME"], o.Name))
	}
	if err := Adapt(items, repository); err != nil {
		return nil, err
	}
	if o.Upstream {
		if items, err = upstreamObjects(items, vars, l.Releases.Repository()); err != nil {
			return nil, err
		}
	}
	for i := range items {
		if items[i].GetNamespace() == "" && items[i].GetKind() != "Namespace" {
			items[i].SetNamespace(o.Namespace) // the ClusterClass's objects, as clusterctl sets the target namespace
		}
		if o.Upstream && upstreamKinds[items[i].GetKind()] {
			objs = append(objs, &items[i]) // as upstream wrote it: not through this repository's Go types
			continue
		}
		obj, err := typed(scheme, &items[i])
		if err != nil {
			return nil, err
		}
		if cp, ok := obj.(*controlplanev1.OpenshiftAssistedControlPlane); ok && o.Fencing {
			cp.Spec.Fencing = &controlplanev1.OpenshiftAssistedControlPlaneFencingSpec{}
		}
		objs = append(objs, obj)
	}
	if o.IPStack == DualStack {
		if o.Topology || o.ControlPlanes == 1 {
			return nil, fmt.Errorf("the lab's dual-stack cluster is the default flavor (3 to 5 control-plane nodes, not a topology)")
		}
		if err := dualStack(objs); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// mirrorConfig is the image registry ConfigMap of a disconnected cluster, as a user creates it
// from oc-mirror's output: OpenShift's release and component repositories mirrored to the lab's
// registry, whose CA it trusts. Labelled, as the pull secret is, for clusterctl move.
func (l *Lab) mirrorConfig(namespace, name, cluster string) *corev1.ConfigMap {
	host := l.Releases.Host
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: cluster, clusterctlv1.ClusterctlMoveLabel: ""}},
		Data: map[string]string{
			"registries.conf": fmt.Sprintf(`[[registry]]
location = %q
[[registry.mirror]]
location = "%s/openshift-release-dev/ocp-release"

[[registry]]
location = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
[[registry.mirror]]
location = "%s/openshift-release-dev/ocp-v4.0-art-dev"
`, OpenShiftReleaseRepository, host, host),
			"ca-bundle.crt": string(l.Releases.CACertPEM()),
		},
	}
}

//go:embed upstream/cluster-template-v0.4.0.yaml
var upstreamTemplate []byte

// lab variables: ${NAME}; upstream's own per-host variables ($METADATA_NAME, ${METADATA_UUID})
// are not the lab's and stay as they are.
var templateVariable = regexp.MustCompile(`\$\{([A-Z_]+)\}`)

// upstreamKinds are the kinds of upstreamTemplate.
var upstreamKinds = map[string]bool{"OpenshiftAssistedControlPlane": true, "OpenshiftAssistedConfigTemplate": true}

// upstreamObjects replaces, in items, the control plane and the workers' config template with
// upstream's (upstreamTemplate) rendered with vars.
func upstreamObjects(items []unstructured.Unstructured, vars map[string]string, releaseImageRepository string) ([]unstructured.Unstructured, error) {
	vars = maps.Clone(vars)
	vars["RELEASE_IMAGE_REPOSITORY"] = releaseImageRepository
	rendered := templateVariable.ReplaceAllFunc(upstreamTemplate, func(m []byte) []byte {
		if v, ok := vars[string(templateVariable.FindSubmatch(m)[1])]; ok {
			return []byte(v)
		}
		return m
	})
	upstream, err := utilyaml.ToUnstructured(rendered)
	if err != nil {
		return nil, fmt.Errorf("parsing upstream's cluster template: %w", err)
	}
	out := upstream
	for _, item := range items {
		if !upstreamKinds[item.GetKind()] {
			out = append(out, item)
		}
	}
	return out, nil
}

// Adapt adds to a cluster's manifests what a management cluster without Cluster API's webhooks
// needs beyond what a user writes: each MachineDeployment gets the rollout strategy Cluster API's
// defaulting webhook would write, each MachineHealthCheck the cluster-name label and node startup
// timeout that webhook writes (internal/webhooks/machinehealthcheck.go Default, v1.13.4: Cluster
// API's e2e framework finds a cluster's MachineHealthChecks by that label), and, when
// releaseImageRepository is set (the lab's registry), the control plane reads release images
// from there (the mirror annotation; a topology's control plane gets it through the Cluster's
// spec.topology.controlPlane.metadata).
func Adapt(objs []unstructured.Unstructured, releaseImageRepository string) error {
	for i := range objs {
		o := &objs[i]
		switch o.GetKind() {
		case "Cluster":
			// A topology's control plane gets the annotation from the Cluster's topology.
			if _, ok, _ := unstructured.NestedMap(o.Object, "spec", "topology"); !ok || releaseImageRepository == "" {
				continue
			}
			if err := unstructured.SetNestedField(o.Object, releaseImageRepository, "spec", "topology", "controlPlane", "metadata", "annotations",
				controlplanev1.ReleaseImageRepositoryAnnotation); err != nil {
				return fmt.Errorf("annotating the topology of Cluster %s: %w", o.GetName(), err)
			}
		case "OpenshiftAssistedControlPlane":
			if releaseImageRepository == "" {
				continue
			}
			annotations := o.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[controlplanev1.ReleaseImageRepositoryAnnotation] = releaseImageRepository
			o.SetAnnotations(annotations)
		case "MachineHealthCheck":
			labels := o.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[clusterv1.ClusterNameLabel], _, _ = unstructured.NestedString(o.Object, "spec", "clusterName")
			o.SetLabels(labels)
			if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "checks", "nodeStartupTimeoutSeconds"); !found {
				if err := unstructured.SetNestedField(o.Object, int64(clusterv1.DefaultNodeStartupTimeoutSeconds), "spec", "checks", "nodeStartupTimeoutSeconds"); err != nil {
					return fmt.Errorf("defaulting MachineHealthCheck %s: %w", o.GetName(), err)
				}
			}
		case "MachineDeployment":
			if _, found, _ := unstructured.NestedMap(o.Object, "spec", "rollout", "strategy"); found {
				continue
			}
			strategy := map[string]any{
				"type":          string(clusterv1.RollingUpdateMachineDeploymentStrategyType),
				"rollingUpdate": map[string]any{"maxSurge": int64(1), "maxUnavailable": int64(0)},
			}
			if err := unstructured.SetNestedMap(o.Object, strategy, "spec", "rollout", "strategy"); err != nil {
				return fmt.Errorf("defaulting MachineDeployment %s: %w", o.GetName(), err)
			}
		}
	}
	return nil
}

// typed converts u into the Go type the scheme knows for its kind.
func typed(scheme *runtime.Scheme, u *unstructured.Unstructured) (client.Object, error) {
	ro, err := scheme.New(u.GroupVersionKind())
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ro); err != nil {
		return nil, fmt.Errorf("converting %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	obj, ok := ro.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", u.GetKind())
	}
	obj.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
	return obj, nil
}

// CreateCluster creates the objects of the cluster o.
func (l *Lab) CreateCluster(ctx context.Context, o ClusterOptions) error {
	objs, err := l.ClusterObjects(o)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		// As `kubectl apply --validate=strict`: a field the API does not know is refused.
		if err := l.Mgmt.Client.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
			return fmt.Errorf("creating %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	return nil
}
