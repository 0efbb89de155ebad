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
	"encoding/json"
	"fmt"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// infraEnvName is the name of a config's InfraEnv, in the config's namespace: the config's own
// name, so that one config never has two InfraEnvs and the InfraEnv label on an Agent names
// the config.
func infraEnvName(config *bootstrapv1.OpenshiftAssistedConfig) string { return config.Name }

// pullSecretRef is the pull secret of the config's InfraEnv: the config's own, else the
// ClusterDeployment's (which the control plane fills from its pull secret). Nil when neither is set.
func pullSecretRef(config *bootstrapv1.OpenshiftAssistedConfig, cd *hivev1.ClusterDeployment) *corev1.LocalObjectReference {
	if config.Spec.PullSecretRef != nil && config.Spec.PullSecretRef.Name != "" {
		return config.Spec.PullSecretRef.DeepCopy()
	}
	if cd != nil && cd.Spec.PullSecretRef != nil && cd.Spec.PullSecretRef.Name != "" {
		return cd.Spec.PullSecretRef.DeepCopy()
	}
	return nil
}

// desiredInfraEnvSpec maps every InfraEnv setting of the config onto an InfraEnv spec bound to
// the ClusterDeployment cd. pullSecret is the result of pullSecretRef.
func desiredInfraEnvSpec(config *bootstrapv1.OpenshiftAssistedConfig, cd *hivev1.ClusterDeployment, pullSecret *corev1.LocalObjectReference) aiv1beta1.InfraEnvSpec {
	s := config.Spec
	spec := aiv1beta1.InfraEnvSpec{
		ClusterRef:                 &aiv1beta1.ClusterReference{Name: cd.Name, Namespace: cd.Namespace},
		PullSecretRef:              pullSecret,
		SSHAuthorizedKey:           s.SSHAuthorizedKey,
		AdditionalNTPSources:       append([]string(nil), s.AdditionalNTPSources...),
		NMStateConfigLabelSelector: *s.NMStateConfigLabelSelector.DeepCopy(),
		CpuArchitecture:            s.CpuArchitecture,
		KernelArguments:            append([]aiv1beta1.KernelArgument(nil), s.KernelArguments...),
		AdditionalTrustBundle:      s.AdditionalTrustBundle,
		OSImageVersion:             s.OSImageVersion,
		IgnitionConfigOverride:     config.Annotations[bootstrapv1.DiscoveryIgnitionOverrideAnnotation],
		// The API server defaults it; set it so that the desired spec equals the stored one.
		IPXEScriptType: aiv1beta1.DiscoveryImageAlways,
	}
	if s.Proxy != nil {
		spec.Proxy = s.Proxy.DeepCopy()
	}
	return spec
}

// mirrorRegistryRefAnnotation records on an InfraEnv the spec.mirrorRegistryRef this provider last
// wrote there ("<namespace>/<name>", empty for none): the InfraEnv type this provider is built with
// lacks the field, so this is how a reconcile knows, without reading the InfraEnv again, whether
// the field needs a write.
const mirrorRegistryRefAnnotation = "openshiftassistedconfig.cluster.x-k8s.io/mirror-registry-ref"

// patchNewerInfraEnvFields writes the InfraEnv fields that are newer than the InfraEnv type this
// provider is built with, by a merge patch of those fields alone (every other field, known to the
// types or not, is kept), until the bootstrap data is written:
//   - spec.imageType full-iso for a host that boots a disk image: the discovery ignition carries
//     the static network configuration (NMStateConfigs) only for a full ISO; a minimal one keeps
//     it in its initrd, which a disk image never boots (upstream CAPOA's GetInfraEnvFromConfig
//     sets full-iso for this reason);
//   - spec.mirrorRegistryRef, the AgentClusterInstall's (assisted-service's per-cluster mirror
//     registry, docs/user-guide/cluster-mirror-registry.md: the same ConfigMap on the
//     AgentClusterInstall and the InfraEnv), so that the discovery image pulls the assisted
//     installer's images and the release from the cluster's mirrors. The control plane writes it
//     on a hub whose CRDs have it, in the write that creates the AgentClusterInstall; and no
//     discovery image exists before the AgentClusterInstall does (assisted-service's InfraEnv
//     controller answers "cluster does not exist" until then), so no host boots one without it.
//
// A hub whose InfraEnv CRD lacks a field prunes it. The AgentClusterInstall is read live (the
// client caches no unstructured objects), once per reconcile until the bootstrap data is written.
func (r *OpenshiftAssistedConfigReconciler) patchNewerInfraEnvFields(ctx context.Context, s *scope, ie *aiv1beta1.InfraEnv) error {
	spec := map[string]any{}
	if s.diskImage {
		spec["imageType"] = string(models.ImageTypeFullIso)
	}
	var ref map[string]any
	// The AgentClusterInstall the ClusterDeployment names, read live whether or not the cache
	// shows it yet: a cache behind the API server (its informer restarting after a CRD update of
	// the hub) would leave the InfraEnv it creates without the cluster's mirrors until some later
	// event, while assisted-service builds the discovery image from the InfraEnv at once.
	if cir := s.clusterDeployment.Spec.ClusterInstallRef; cir != nil && cir.Kind == "AgentClusterInstall" && cir.Name != "" {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.clusterDeployment.Namespace, Name: cir.Name}, live); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("reading AgentClusterInstall %s: %w", cir.Name, err)
		}
		ref, _, _ = unstructured.NestedMap(live.Object, "spec", "mirrorRegistryRef")
	}
	recorded := ""
	if ref != nil {
		recorded = fmt.Sprint(ref["namespace"], "/", ref["name"])
	}
	var metadata map[string]any
	if ie.Annotations[mirrorRegistryRefAnnotation] != recorded {
		spec["mirrorRegistryRef"] = ref // nil removes it (RFC 7386)
		metadata = map[string]any{"annotations": map[string]any{mirrorRegistryRefAnnotation: recorded}}
	}
	if len(spec) == 0 {
		return nil
	}
	patch := map[string]any{"spec": spec}
	if metadata != nil {
		patch["metadata"] = metadata
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, ie, client.RawPatch(types.MergePatchType, raw)); err != nil {
		return fmt.Errorf("patching InfraEnv %s: %w", ie.Name, err)
	}
	return nil
}
