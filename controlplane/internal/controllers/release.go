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
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
)

// The worker templates are read through the manager's cache (one informer; a control plane reads
// them on every reconcile).
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigtemplates,verbs=get;list;watch

// A cluster's release is chosen for the architectures of all its machine configs: the control
// plane's spec.openshiftAssistedConfigSpec.cpuArchitecture and the spec.template.spec.cpuArchitecture
// of the OpenshiftAssistedConfigTemplates its MachineDeployments' bootstrap configRefs name (those
// with no replicas too: a pool scaled up later must find its architecture in the release). One
// architecture: that architecture's release image, as before; several: OpenShift's multi release
// (<repository>:<version>-multi), an image index whose digest the ClusterImageSet pins, and which
// must serve each of them (else ReleaseImageResolved is False, ArchitectureNotInRelease).
//
// When: the architectures are read once per reconcile, by readSpecRelease at the start of
// reconcileNormal, before the release is read, into scope.architectures; every release image of
// that reconcile (the spec's read, the ClusterImageSet, the upgrade's digest, the running
// release's status read) is chosen from them. A reconcile that has not read them (a deletion, or
// one that failed listing them) chooses from the control plane's architecture alone.
//
// Upstream (openshift-assisted/cluster-api-provider-openshift-assisted, controlplane/internal/
// controller/openshiftassistedcontrolplane_controller.go getArchitectureFromBootstrapConfigs)
// lists the cluster's OpenshiftAssistedConfigs, the configs of existing Machines; the templates
// are read here instead so that the release does not change as Machines come and go.

// releaseImage is the release image of an OpenShift (or OKD) version for the cluster: in its
// release image repository, for its architectures (see above).
// A distributionVersion that ends with an architecture (release.SplitArchitecture, upstream's
// v0.3.0-v0.3.2 form) names that architecture's release.
func (s *scope) releaseImage(version string) string {
	version, arch := release.SplitArchitecture(version)
	if arch == "" {
		arch = release.ClusterArchitecture(s.machineArchitectures())
	}
	return release.Image(s.oacp.ReleaseImageRepository(), version, arch)
}

// machineArchitectures are the architectures of the cluster's machine configs, once read; the
// control plane's alone before.
func (s *scope) machineArchitectures() []string {
	if s.architectures == nil {
		return []string{s.oacp.Spec.OpenshiftAssistedConfigSpec.CpuArchitecture}
	}
	return s.architectures
}

// readSpecRelease reads the architectures of the cluster into s, then resolves the release of
// spec.distributionVersion for them. A release that cannot be resolved is not an error of the
// reconcile (s.releaseErr, reported in ReleaseImageResolved): it does not block the installation.
func (r *OpenshiftAssistedControlPlaneReconciler) readSpecRelease(ctx context.Context, s *scope) error {
	archs, err := r.clusterArchitectures(ctx, s)
	if err != nil {
		return err
	}
	s.architectures = archs
	image := s.releaseImage(s.oacp.Spec.DistributionVersion)
	s.specRelease, s.releaseErr = r.Release.Read(ctx, image, r.releaseAccess(s.oacp))
	if missing := s.specRelease.MissingArchitectures(archs); s.releaseErr == nil && len(missing) > 0 {
		s.releaseErr = &architecturesError{missing: missing, platforms: s.specRelease.Platforms}
		s.specRelease = release.Info{}
	}
	if _, named := release.SplitArchitecture(s.oacp.Spec.DistributionVersion); named != "" && named != release.MultiArchitecture {
		// The release of one architecture the version names cannot run the machines of another
		// (archs are distinct: clusterArchitectures).
		var others []string
		for _, a := range archs {
			if a != named {
				others = append(others, a)
			}
		}
		if len(others) > 0 {
			s.releaseErr = &architecturesError{missing: others, named: named}
			s.specRelease = release.Info{}
		}
	}
	s.specKubeVersion = s.specRelease.KubernetesVersion
	if s.releaseErr == nil && !sameKubernetesVersion(s.oacp.Spec.Version, s.specKubeVersion) {
		s.releaseErr = &versionMismatchError{version: s.oacp.Spec.Version, release: s.specKubeVersion}
	}
	if s.releaseErr != nil {
		ctrl.LoggerFrom(ctx).Info("Cannot resolve the release image yet", "image", image, "error", release.LogMessage(s.releaseErr))
	}
	return nil
}

// clusterArchitectures returns the distinct architectures (release names: x86_64, aarch64, ...)
// of the control plane and of the worker templates of the Cluster's MachineDeployments. A
// template that does not exist (yet) adds nothing: the MachineDeployment waits for it.
func (r *OpenshiftAssistedControlPlaneReconciler) clusterArchitectures(ctx context.Context, s *scope) ([]string, error) {
	archs := []string{release.Architecture(s.oacp.Spec.OpenshiftAssistedConfigSpec.CpuArchitecture)}
	// By spec.clusterName, not by the cluster-name label, which Cluster API's MachineDeployment
	// controller (or webhook) adds only once it has seen the MachineDeployment: the
	// ClusterImageSet takes the release of the first reconcile that reads it and keeps it until
	// the install ends (desiredClusterImageSet), so the architectures must be known from the start.
	mds := &clusterv1.MachineDeploymentList{}
	if err := r.Client.List(ctx, mds, client.InNamespace(s.cluster.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the Cluster's MachineDeployments: %w", err)
	}
	for _, md := range mds.Items {
		ref := md.Spec.Template.Spec.Bootstrap.ConfigRef
		if md.Spec.ClusterName != s.cluster.Name || !md.DeletionTimestamp.IsZero() || ref.Kind != "OpenshiftAssistedConfigTemplate" || ref.APIGroup != bootstrapv1.GroupVersion.Group {
			continue
		}
		tmpl := &bootstrapv1.OpenshiftAssistedConfigTemplate{}
		key := client.ObjectKey{Namespace: md.Namespace, Name: ref.Name}
		if err := r.Client.Get(ctx, key, tmpl); err != nil {
			if apierrors.IsNotFound(err) {
				ctrl.LoggerFrom(ctx).V(1).Info("The bootstrap template of a MachineDeployment does not exist (yet)",
					"MachineDeployment", klog.KObj(&md), "OpenshiftAssistedConfigTemplate", klog.KRef(key.Namespace, key.Name))
				continue
			}
			return nil, fmt.Errorf("getting OpenshiftAssistedConfigTemplate %s of MachineDeployment %s: %w", ref.Name, md.Name, err)
		}
		if a := release.Architecture(tmpl.Spec.Template.Spec.CpuArchitecture); !slices.Contains(archs, a) {
			archs = append(archs, a)
		}
	}
	return archs, nil
}

// architecturesError: the release image is an image index without an image for some of the
// architectures of the cluster's machine configs.
type architecturesError struct {
	// missing are the architectures (release names) the release does not serve; platforms those
	// (OCI names) it serves.
	missing, platforms []string
	// named is the architecture spec.distributionVersion ends with, when the release is that
	// architecture's (release.SplitArchitecture) rather than a multi-architecture index.
	named string
}

func (e *architecturesError) Error() string {
	if e.named != "" {
		return fmt.Sprintf("spec.distributionVersion names the %s release, which cannot run the cluster's %s machines: "+
			"write the version without the architecture (the release is then the machines' architecture, or multi for several) or with theirs",
			e.named, strings.Join(e.missing, ", "))
	}
	return fmt.Sprintf("the multi-architecture release has no image for %s (it serves %s)",
		strings.Join(e.missing, ", "), strings.Join(e.platforms, ", "))
}

// versionMismatchError: spec.version is not the Kubernetes version of the release of
// spec.distributionVersion. The release itself was read (scope.specRelease is kept, so Machines
// still carry the version the release really has).
type versionMismatchError struct {
	// version is spec.version; release the Kubernetes version the release carries.
	version, release string
}

func (e *versionMismatchError) Error() string {
	return fmt.Sprintf("spec.version %s is not %s, the Kubernetes version of the release", e.version, e.release)
}

// sameKubernetesVersion tells whether spec.version (unset: any) names the Kubernetes version
// releaseVersion, the release's: equal as semantic versions, so a leading v and build metadata do not
// count (Cluster API's topology writes v1.32.5; a release names 1.32.5).
func sameKubernetesVersion(spec, releaseVersion string) bool {
	if spec == "" {
		return true
	}
	c, ok := release.CompareKubernetesVersions(spec, releaseVersion)
	return ok && c == 0
}

// releaseAccess is what the control plane's release reads use: the credentials of its pull secret
// (spec.config.pullSecretRef), which a mirror needs as much as the install does, and the CA and
// mirrors of its image registry ConfigMap (spec.config.imageRegistryRef: ca-bundle.crt and
// registries.conf), so that a disconnected cluster's release is read where the cluster pulls it.
// They are read from the API server (the manager caches neither) only when the reader asks a
// registry: a release it knows costs no read.
func (r *OpenshiftAssistedControlPlaneReconciler) releaseAccess(oacp *controlplanev1.OpenshiftAssistedControlPlane) release.Access {
	cfg := oacp.Spec.Config
	scope := oacp.Namespace + "/"
	if cfg.PullSecretRef != nil {
		scope += cfg.PullSecretRef.Name
	}
	scope += "/"
	if cfg.ImageRegistryRef != nil {
		scope += cfg.ImageRegistryRef.Name
	}
	return release.Access{Scope: scope, Load: func(ctx context.Context) (release.Config, error) {
		var out release.Config
		if ref := cfg.PullSecretRef; ref != nil {
			secret := &corev1.Secret{}
			if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: oacp.Namespace, Name: ref.Name}, secret); err != nil {
				if apierrors.IsNotFound(err) {
					return out, fmt.Errorf("the pull secret %s (spec.config.pullSecretRef) does not exist", ref.Name)
				}
				return out, fmt.Errorf("getting the pull secret %s: %w", ref.Name, err)
			}
			var ok bool
			if out.PullSecret, ok = secret.Data[corev1.DockerConfigJsonKey]; !ok {
				return out, fmt.Errorf("the pull secret %s (spec.config.pullSecretRef) has no %s key", ref.Name, corev1.DockerConfigJsonKey)
			}
		}
		if ref := cfg.ImageRegistryRef; ref != nil {
			// A missing or unusable ConfigMap is reported on Available (reconcileRegistryManifests);
			// without it the release is read from its own registry meanwhile.
			cm := &corev1.ConfigMap{}
			switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: oacp.Namespace, Name: ref.Name}, cm); {
			case err == nil:
				out.CABundle = []byte(cm.Data[registryCAKey])
				conf, err := parseRegistriesConf(cm.Data[registriesConfKey])
				if err != nil {
					return out, fmt.Errorf("the image registry ConfigMap %s cannot be used (see the Available condition)", ref.Name)
				}
				out.Mirrors = conf.releaseMirrors()
			case !apierrors.IsNotFound(err):
				return out, fmt.Errorf("getting the image registry ConfigMap %s: %w", ref.Name, err)
			}
		}
		return out, nil
	}}
}
