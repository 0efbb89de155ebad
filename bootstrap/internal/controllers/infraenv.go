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
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"

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
