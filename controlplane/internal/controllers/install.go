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

package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/unknownfields"
)

const (
	// InstallConfigOverridesAnnotation is the AgentClusterInstall annotation assisted-service
	// reads install-config overrides from.
	InstallConfigOverridesAnnotation = aiv1beta1.Group + "/install-config-overrides"

	defaultPodCIDR     = "10.128.0.0/14"
	defaultServiceCIDR = "172.30.0.0/16"
	defaultNetworkType = "OVNKubernetes"
)

// preInstallStates are the AgentClusterInstall states in which the installation has not started:
// while in them the AgentClusterInstall follows the control plane's spec; afterwards it is left
// as installed.
var preInstallStates = map[string]bool{
	"":                                  true,
	models.ClusterStatusInsufficient:    true,
	models.ClusterStatusReady:           true,
	models.ClusterStatusPendingForInput: true,
}

// installStarted tells whether assisted-service started installing the cluster.
func installStarted(aci *hiveextv1beta1.AgentClusterInstall) bool {
	return aci != nil && (isInstalled(aci) || !preInstallStates[aci.Status.DebugInfo.State])
}

// installed tells whether the cluster is installed: the AgentClusterInstall reports it, or Hive's
// ClusterDeployment records it. After a clusterctl move only the latter is left (move does not
// carry status, and assisted-service on the new hub does not report an installed single-node
// cluster it never installed).
func (s *scope) installed() bool {
	return isInstalled(s.aci) || cdInstalled(s.cd)
}

// knownInstalled tells, from the control plane alone, whether its cluster is installed: the
// admin kubeconfig was written, or the version it runs was read from its ClusterVersion.
func knownInstalled(oacp *controlplanev1.OpenshiftAssistedControlPlane) bool {
	return ptr.Deref(oacp.Status.Initialization.ControlPlaneInitialized, false) || oacp.Status.DistributionVersion != ""
}

// cdInstalled tells whether Hive's ClusterDeployment records the cluster installed.
func cdInstalled(cd *hivev1.ClusterDeployment) bool {
	return cd != nil && cd.Spec.Installed
}

// isInstalled tells whether the AgentClusterInstall reports the cluster installed.
func isInstalled(aci *hiveextv1beta1.AgentClusterInstall) bool {
	if aci == nil {
		return false
	}
	switch aci.Status.DebugInfo.State {
	case models.ClusterStatusInstalled, models.ClusterStatusAddingHosts:
		return true
	}
	for _, c := range aci.Status.Conditions {
		if c.Type == hivev1.ClusterInstallCompleted && c.Status == "True" {
			return true
		}
	}
	return false
}

// openshiftClusterName is the OpenShift cluster's name: spec.config.clusterName, or the Cluster's.
func openshiftClusterName(oacp *controlplanev1.OpenshiftAssistedControlPlane, cluster *clusterv1.Cluster) string {
	if oacp.Spec.Config.ClusterName != "" {
		return oacp.Spec.Config.ClusterName
	}
	return cluster.Name
}

// ImageSetName is the name of a control plane's ClusterImageSet. ClusterImageSets are
// cluster-scoped, so the name carries a hash of the control plane's namespace and name: two
// control planes never share one, whatever their names.
func ImageSetName(oacp *controlplanev1.OpenshiftAssistedControlPlane) string {
	sum := sha256.Sum256([]byte(oacp.Namespace + "/" + oacp.Name))
	prefix := oacp.Namespace + "-" + oacp.Name
	if len(prefix) > 48 {
		prefix = strings.TrimRight(prefix[:48], "-.")
	}
	return prefix + "-" + hex.EncodeToString(sum[:])[:12]
}

// hostPrefix returns the per-node subnet size for a cluster network: 23 (512 addresses per node)
// for IPv4 networks large enough to hold 8 nodes at that size, else the largest subnets that
// still give 8 nodes; 64 for IPv6, which OVN-Kubernetes requires.
func hostPrefix(p netip.Prefix) (int32, error) {
	bits := p.Bits()
	if p.Addr().Is4() {
		hp := max(23, bits+3)
		if hp > 28 {
			return 0, fmt.Errorf("cluster network %s is too small: it must be a /25 or larger", p)
		}
		return int32(hp), nil
	}
	if bits > 61 {
		return 0, fmt.Errorf("IPv6 cluster network %s is too small: it must be a /61 or larger to give each node a /64", p)
	}
	return 64, nil
}

// networking returns the AgentClusterInstall networking for the Cluster's clusterNetwork: IPv4,
// IPv6 or dual stack (one pod and one service network per family, in the same order).
func networking(oacp *controlplanev1.OpenshiftAssistedControlPlane, cluster *clusterv1.Cluster) (hiveextv1beta1.Networking, error) {
	pods := cluster.Spec.ClusterNetwork.Pods.CIDRBlocks
	if len(pods) == 0 {
		pods = []string{defaultPodCIDR}
	}
	services := cluster.Spec.ClusterNetwork.Services.CIDRBlocks
	if len(services) == 0 {
		services = []string{defaultServiceCIDR}
	}
	if len(pods) > 2 || len(services) > 2 {
		return hiveextv1beta1.Networking{}, fmt.Errorf("at most two pod and two service networks (one per IP family) are supported, got %d and %d", len(pods), len(services))
	}
	n := hiveextv1beta1.Networking{ServiceNetwork: services, NetworkType: oacp.Spec.Config.NetworkType}
	if n.NetworkType == "" {
		n.NetworkType = defaultNetworkType
	}
	var podFamilies, serviceFamilies []bool
	for _, cidr := range pods {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return hiveextv1beta1.Networking{}, fmt.Errorf("invalid pod network %q in Cluster.spec.clusterNetwork: %w", cidr, err)
		}
		hp, err := hostPrefix(p)
		if err != nil {
			return hiveextv1beta1.Networking{}, err
		}
		podFamilies = append(podFamilies, p.Addr().Is4())
		n.ClusterNetwork = append(n.ClusterNetwork, hiveextv1beta1.ClusterNetworkEntry{CIDR: p.Masked().String(), HostPrefix: hp})
	}
	for _, cidr := range services {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return hiveextv1beta1.Networking{}, fmt.Errorf("invalid service network %q in Cluster.spec.clusterNetwork: %w", cidr, err)
		}
		serviceFamilies = append(serviceFamilies, p.Addr().Is4())
	}
	if fmt.Sprint(podFamilies) != fmt.Sprint(serviceFamilies) {
		return hiveextv1beta1.Networking{}, fmt.Errorf("the pod networks %v and service networks %v must have the same IP families in the same order", pods, services)
	}
	if len(podFamilies) == 2 && podFamilies[0] == podFamilies[1] {
		return hiveextv1beta1.Networking{}, fmt.Errorf("dual stack needs one IPv4 and one IPv6 network, got %v", pods)
	}
	return n, nil
}

// vipFamilyRefusal says why the VIPs of cfg do not fit the cluster networks of n ("" when they
// do): OpenShift takes the i-th API and ingress VIP in the IP family of the i-th network (the
// primary family first), so there are no more VIPs than networks and their families follow the
// networks' order. The CRD schema checks the VIPs themselves; this needs the Cluster.
func vipFamilyRefusal(cfg *controlplanev1.OpenshiftAssistedControlPlaneConfigSpec, n hiveextv1beta1.Networking) string {
	families := make([]string, 0, len(n.ClusterNetwork))
	for _, cn := range n.ClusterNetwork {
		families = append(families, family(netip.MustParsePrefix(cn.CIDR).Addr()))
	}
	const how = "list the VIPs in the IP families and order of the Cluster's spec.clusterNetwork (pods and services), " +
		"or change the Cluster's networks"
	for _, list := range []struct {
		name string
		vips []string
	}{{"apiVIPs", cfg.APIVIPs}, {"ingressVIPs", cfg.IngressVIPs}} {
		name, vips := list.name, list.vips
		if len(vips) > len(families) {
			return fmt.Sprintf("spec.config.%s has %d addresses (dual stack) but the Cluster has only the %s network %s: give one VIP, "+
				"or add a pod and a service network of the other IP family to the Cluster", name, len(vips), families[0], n.ClusterNetwork[0].CIDR)
		}
		for i, vip := range vips {
			addr, err := netip.ParseAddr(vip)
			if err != nil {
				continue // the CRD schema refuses it
			}
			if f := family(addr); f != families[i] {
				return fmt.Sprintf("spec.config.%s[%d] %s is an %s address but the Cluster's network %d (%s) is %s: %s",
					name, i, vip, f, i+1, n.ClusterNetwork[i].CIDR, families[i], how)
			}
		}
	}
	return ""
}

func family(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}

// platformType is None for single-node OpenShift and for clusters without VIPs (an external load
// balancer), BareMetal (with keepalived VIPs) otherwise.
func platformType(oacp *controlplanev1.OpenshiftAssistedControlPlane) hiveextv1beta1.PlatformType {
	if replicas(oacp) == 1 || len(oacp.Spec.Config.APIVIPs) == 0 {
		return hiveextv1beta1.NonePlatformType
	}
	return hiveextv1beta1.BareMetalPlatformType
}

// installConfigOverrides merges the install capabilities (installCapabilities: the spec's, with
// the platform's defaults) with the install-config override annotation; keys of the annotation win.
func installConfigOverrides(oacp *controlplanev1.OpenshiftAssistedControlPlane) (string, error) {
	overrides := map[string]any{}
	if raw := oacp.Annotations[controlplanev1.InstallConfigOverrideAnnotation]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &overrides); err != nil {
			return "", fmt.Errorf("annotation %s is not a JSON object: %w", controlplanev1.InstallConfigOverrideAnnotation, err)
		}
	}
	baseline, additional := installCapabilities(oacp)
	if _, set := overrides["capabilities"]; !set && (baseline != "" || len(additional) > 0) {
		c := map[string]any{}
		if baseline != "" {
			c["baselineCapabilitySet"] = baseline
		}
		if len(additional) > 0 {
			c["additionalEnabledCapabilities"] = additional
		}
		overrides["capabilities"] = c
	}
	if len(overrides) == 0 {
		return "", nil
	}
	out, err := json.Marshal(overrides)
	if err != nil {
		return "", fmt.Errorf("encoding install-config overrides: %w", err)
	}
	return string(out), nil
}

// desiredAgentClusterInstall sets, on aci, every field the control plane decides. Fields written
// by assisted-service (clusterMetadata, status) are left alone.
func desiredAgentClusterInstall(aci *hiveextv1beta1.AgentClusterInstall, oacp *controlplanev1.OpenshiftAssistedControlPlane,
	cluster *clusterv1.Cluster, workers int) error {
	net, err := networking(oacp, cluster)
	if err != nil {
		return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.InvalidSpecReason,
			fmt.Errorf("%w; correct the Cluster's spec.clusterNetwork", err))
	}
	overrides, err := installConfigOverrides(oacp)
	if err != nil {
		return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.InvalidSpecReason,
			fmt.Errorf("%w; correct or remove the annotation", err))
	}
	cfg := oacp.Spec.Config
	platform := platformType(oacp)
	if platform == hiveextv1beta1.BareMetalPlatformType {
		if why := vipFamilyRefusal(&cfg, net); why != "" {
			return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.InvalidSpecReason, errors.New(why))
		}
	}
	if why := networkTypeRefusal(net); why != "" {
		return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.InvalidSpecReason, errors.New(why))
	}
	machine, why := machineNetworks(oacp, net)
	if why != "" {
		return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.InvalidSpecReason, errors.New(why))
	}
	net.MachineNetwork = machine
	net.UserManagedNetworking = ptr.To(platform == hiveextv1beta1.NonePlatformType)
	aci.Spec.ClusterDeploymentRef.Name = controlplanev1.ClusterDeploymentKey(cluster).Name
	aci.Spec.ImageSetRef = &hivev1.ClusterImageSetReference{Name: ImageSetName(oacp)}
	aci.Spec.Networking = net
	aci.Spec.SSHPublicKey = cfg.SSHAuthorizedKey
	aci.Spec.ProvisionRequirements = hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: int(replicas(oacp)), WorkerAgents: workers}
	aci.Spec.PlatformType = platform
	aci.Spec.APIVIPs, aci.Spec.IngressVIPs = nil, nil
	if platform == hiveextv1beta1.BareMetalPlatformType {
		aci.Spec.APIVIPs = append([]string(nil), cfg.APIVIPs...)
		aci.Spec.IngressVIPs = append([]string(nil), cfg.IngressVIPs...)
	}
	aci.Spec.ManifestsConfigMapRefs = append([]hiveextv1beta1.ManifestsConfigMapReference(nil), cfg.ManifestsConfigMapRefs...)
	aci.Spec.DiskEncryption = nil
	if d := cfg.DiskEncryption; d != nil {
		aci.Spec.DiskEncryption = &hiveextv1beta1.DiskEncryption{EnableOn: d.EnableOn, Mode: d.Mode, TangServers: d.TangServers}
	}
	aci.Spec.Proxy = cfg.Proxy.DeepCopy()
	aci.Spec.MastersSchedulable = cfg.MastersSchedulable || replicas(oacp) == 1
	if overrides != "" {
		if aci.Annotations == nil {
			aci.Annotations = map[string]string{}
		}
		aci.Annotations[InstallConfigOverridesAnnotation] = overrides
	} else {
		delete(aci.Annotations, InstallConfigOverridesAnnotation)
	}
	if aci.Labels == nil {
		aci.Labels = map[string]string{}
	}
	aci.Labels[clusterv1.ClusterNameLabel] = cluster.Name
	copyWatchLabel(aci.Labels, oacp)
	return nil
}

// desiredClusterDeployment sets, on cd, every field the control plane decides. The spec is
// written when the ClusterDeployment is created only: Hive's admission webhook refuses changes to
// it but for a few fields the control plane does not own (ClusterDeployment validateUpdate,
// mutableFields), and one adopted from the upstream provider keeps the spec that provider wrote.
func desiredClusterDeployment(cd *hivev1.ClusterDeployment, oacp *controlplanev1.OpenshiftAssistedControlPlane, cluster *clusterv1.Cluster) {
	if cd.CreationTimestamp.IsZero() {
		cd.Spec.ClusterName = openshiftClusterName(oacp, cluster)
		cd.Spec.BaseDomain = oacp.Spec.Config.BaseDomain
		cd.Spec.PullSecretRef = oacp.Spec.Config.PullSecretRef.DeepCopy()
		cd.Spec.Platform = hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{
			AgentSelector: metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name}},
		}}
		cd.Spec.ClusterInstallRef = &hivev1.ClusterInstallLocalReference{
			Group: hiveextv1beta1.Group, Version: hiveextv1beta1.Version, Kind: "AgentClusterInstall", Name: controlplanev1.ClusterDeploymentKey(cluster).Name,
		}
	}
	if cd.Labels == nil {
		cd.Labels = map[string]string{}
	}
	cd.Labels[clusterv1.ClusterNameLabel] = cluster.Name
	copyWatchLabel(cd.Labels, oacp)
}

// copyWatchLabel copies the control plane's cluster.x-k8s.io/watch-filter label, without which a
// manager started with --watch-filter would not see the changes of the objects it owns.
func copyWatchLabel(to map[string]string, oacp *controlplanev1.OpenshiftAssistedControlPlane) {
	if v, ok := oacp.Labels[clusterv1.WatchLabel]; ok {
		to[clusterv1.WatchLabel] = v
	}
}

// desiredClusterImageSet sets, on cis, every field the control plane decides. The release image is
// image (that of spec.distributionVersion), except for a ClusterImageSet that exists while the
// cluster is not known to be installed: it keeps the release image it was created with, so that a
// version changed during the installation (which the webhook refuses) never changes what is
// installed; once installed, the change is carried out as an upgrade.
func desiredClusterImageSet(cis *hivev1.ClusterImageSet, oacp *controlplanev1.OpenshiftAssistedControlPlane, cluster *clusterv1.Cluster, image string) {
	if cis.CreationTimestamp.IsZero() || cis.Spec.ReleaseImage == "" || knownInstalled(oacp) {
		cis.Spec.ReleaseImage = image
	}
	if cis.Labels == nil {
		cis.Labels = map[string]string{}
	}
	cis.Labels[clusterv1.ClusterNameLabel] = cluster.Name
	cis.Labels[controlplanev1.ImageSetNamespaceLabel] = oacp.Namespace
	cis.Labels[controlplanev1.ImageSetControlPlaneLabel] = oacp.Name
}

// reconcileClusterImageSet writes the control plane's ClusterImageSet. Its release image is pinned
// by digest once the release is read: mirrors (an ImageDigestMirrorSet, the hub's mirror
// configuration) apply to pulls by digest only, and a tag can move. A cluster with mirrors
// (spec.config.imageRegistryRef) is disconnected: its ClusterImageSet, and so its install, waits
// for the digest (Available False, NotResolved, with the reason ReleaseImageResolved gives); any
// other takes the tag meanwhile, as a registry that cannot be reached does not block the install.
// An existing ClusterImageSet of a cluster with mirrors is left as it is while the release is not
// read. A release on a registry the manager may not contact is not installed at all.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileClusterImageSet(ctx context.Context, s *scope) error {
	// A release that lacks an architecture of the cluster's machine configs would install hosts
	// it cannot run on: nothing is installed with it.
	var archs *architecturesError
	if errors.As(s.releaseErr, &archs) && !knownInstalled(s.oacp) {
		return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.ReleaseImageArchitectureNotInReleaseReason,
			fmt.Errorf("release image %s is not installed: %w; see the %s condition", s.releaseImage(s.oacp.Spec.DistributionVersion), archs, controlplanev1.ReleaseImageResolvedCondition))
	}
	var mismatch *versionMismatchError
	if errors.As(s.releaseErr, &mismatch) && !knownInstalled(s.oacp) {
		return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.VersionMismatchReason,
			fmt.Errorf("OpenShift %s is not installed: %w; see the %s condition", s.oacp.Spec.DistributionVersion, mismatch, controlplanev1.ReleaseImageResolvedCondition))
	}
	// A registry the manager may not contact is no more one the hub should pull from:
	// assisted-service reads the ClusterImageSet's release, and the annotation that names the
	// registry is the tenant's. Nothing is installed from it; an installed cluster keeps its
	// ClusterImageSet.
	var notAllowed *release.RegistryNotAllowedError
	if errors.As(s.releaseErr, &notAllowed) {
		if knownInstalled(s.oacp) {
			return nil
		}
		return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.ReleaseImageRegistryNotAllowedReason,
			fmt.Errorf("release image %s is not installed: %s, and the hub would pull it from there; see the %s condition",
				s.releaseImage(s.oacp.Spec.DistributionVersion), release.Summary(s.releaseErr), controlplanev1.ReleaseImageResolvedCondition))
	}
	image := s.specRelease.DigestImage
	if image == "" {
		if s.oacp.Spec.Config.ImageRegistryRef != nil {
			existing := &hivev1.ClusterImageSet{}
			err := r.Client.Get(ctx, client.ObjectKey{Name: ImageSetName(s.oacp)}, existing)
			if client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("getting ClusterImageSet %s: %w", ImageSetName(s.oacp), err)
			}
			switch {
			case err == nil && existing.Spec.ReleaseImage != "":
				return nil // kept as it is until the release is read again
			case !knownInstalled(s.oacp):
				return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.ReleaseImageNotResolvedReason,
					fmt.Errorf("the release image %s must be read before the install starts: a cluster with mirrors (spec.config.imageRegistryRef) installs its release by digest; see the %s condition for why it is not read",
						s.releaseImage(s.oacp.Spec.DistributionVersion), controlplanev1.ReleaseImageResolvedCondition))
			}
		}
		image = s.releaseImage(s.oacp.Spec.DistributionVersion)
	}
	cis := &hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: ImageSetName(s.oacp)}}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, cis, func() error {
		desiredClusterImageSet(cis, s.oacp, s.cluster, image)
		return nil
	}); err != nil {
		return fmt.Errorf("creating or updating ClusterImageSet %s: %w", cis.Name, err)
	}
	return nil
}

func (r *OpenshiftAssistedControlPlaneReconciler) reconcileClusterDeployment(ctx context.Context, s *scope) error {
	key := controlplanev1.ClusterDeploymentKey(s.cluster)
	existing := &hivev1.ClusterDeployment{}
	switch err := r.Client.Get(ctx, key, existing); {
	case err == nil:
		if err := r.takeOver(ctx, s, existing, "ClusterDeployment"); err != nil {
			return err
		}
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("getting ClusterDeployment %s: %w", key.Name, err)
	case s.oacp.Name != key.Name:
		if err := r.refuseUpstreamName(ctx, s); err != nil {
			return err
		}
	}
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, cd, func() error {
		desiredClusterDeployment(cd, s.oacp, s.cluster)
		return controllerutil.SetControllerReference(s.oacp, cd, r.Client.Scheme())
	}); err != nil {
		return fmt.Errorf("creating or updating ClusterDeployment %s: %w", cd.Name, err)
	}
	s.cd = cd
	return nil
}

func (r *OpenshiftAssistedControlPlaneReconciler) reconcileAgentClusterInstall(ctx context.Context, s *scope) error {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	key := controlplanev1.ClusterDeploymentKey(s.cluster)
	err := r.Client.Get(ctx, key, aci)
	switch {
	case apierrors.IsNotFound(err):
		aci = &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	case err != nil:
		return fmt.Errorf("getting AgentClusterInstall %s: %w", key.Name, err)
	default:
		if err := r.takeOver(ctx, s, aci, "AgentClusterInstall"); err != nil {
			return err
		}
		if installStarted(aci) || cdInstalled(s.cd) {
			// Once assisted-service installs, the install-time settings are fixed.
			s.aci = aci
			return nil
		}
	}
	if err := r.checkFencingSupport(ctx, s); err != nil {
		return err
	}
	workers, err := r.day1Workers(ctx, s)
	if err != nil {
		return err
	}
	registry, err := r.reconcileImageRegistry(ctx, s)
	if err != nil {
		return err
	}
	desired := func() error {
		if err := desiredAgentClusterInstall(aci, s.oacp, s.cluster, workers); err != nil {
			return err
		}
		if registry.manifests != nil {
			aci.Spec.ManifestsConfigMapRefs = append(aci.Spec.ManifestsConfigMapRefs, *registry.manifests)
		}
		return nil
	}
	// The fields the pinned types lack (newerfields.go).
	fields := registry.fields
	if arbiters := wantArbiters(s.oacp); arbiters > 0 {
		fields = append(fields, arbiterAgents(arbiters))
	}
	if hasValues(fields) && aci.CreationTimestamp.IsZero() {
		if err := desired(); err != nil {
			return err
		}
		if err := controllerutil.SetControllerReference(s.oacp, aci, r.Client.Scheme()); err != nil {
			return err
		}
		if err := r.createWithNewerFields(ctx, aci, fields); err != nil {
			return err
		}
		s.aci = aci
		return nil
	}
	// Its networks and manifests are arrays of objects: a change keeps the fields a newer CRD has
	// in their unchanged elements (unknownfields).
	result, err := unknownfields.CreateOrPatch(ctx, r.Client, r.APIReader, aci, func() error {
		if err := desired(); err != nil {
			return err
		}
		return controllerutil.SetControllerReference(s.oacp, aci, r.Client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("creating or updating AgentClusterInstall %s: %w", key.Name, err)
	}
	if len(fields) > 0 && result != controllerutil.OperationResultCreated {
		if err := r.writeNewerFields(ctx, aci, fields); err != nil {
			return err
		}
	}
	s.aci = aci
	return nil
}

// day1Workers is the number of workers the Cluster's MachineDeployments ask for before the
// installation: assisted-service waits for that many worker agents.
//
// A control plane with spec.version (a Cluster API topology's, which always writes it) has none:
// Cluster API's MachineSet preflight check ControlPlaneIsStable holds back the Machines of every
// MachineSet while such a control plane reports no status.version, which OpenShift's does once
// installed (Cluster API's machineset_preflight.go). Counting them would make assisted-service
// wait for workers that cannot come: its workers join after the install, as day-2 hosts.
func (r *OpenshiftAssistedControlPlaneReconciler) day1Workers(ctx context.Context, s *scope) (int, error) {
	if s.oacp.Spec.Version != "" {
		return 0, nil
	}
	mds := &clusterv1.MachineDeploymentList{}
	if err := r.Client.List(ctx, mds, client.InNamespace(s.cluster.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: s.cluster.Name}); err != nil {
		return 0, fmt.Errorf("listing the Cluster's MachineDeployments: %w", err)
	}
	n := 0
	for _, md := range mds.Items {
		if md.DeletionTimestamp.IsZero() && md.Spec.Replicas != nil {
			n += int(*md.Spec.Replicas)
		}
	}
	return n, nil
}
