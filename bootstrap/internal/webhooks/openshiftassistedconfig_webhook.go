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

// Package webhooks holds the bootstrap provider's admission webhooks.
package webhooks

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/validation"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-bootstrap-cluster-x-k8s-io-v1alpha2-openshiftassistedconfig,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,versions=v1alpha2,name=validation.openshiftassistedconfig.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1
// +kubebuilder:webhook:verbs=create;update,path=/validate-bootstrap-cluster-x-k8s-io-v1alpha2-openshiftassistedconfigtemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigtemplates,versions=v1alpha2,name=validation.openshiftassistedconfigtemplate.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// ConfigValidator checks the formats of an OpenshiftAssistedConfig's spec that the CRD schema
// cannot (package validation; on update only the fields that changed), and refuses changes to its
// spec once its host started installing: assisted-service took the settings when the host
// registered and would not apply the change.
type ConfigValidator struct{}

var _ admission.Validator[*bootstrapv1.OpenshiftAssistedConfig] = &ConfigValidator{}

// TemplateValidator checks the formats of an OpenshiftAssistedConfigTemplate's
// spec.template.spec, as ConfigValidator those of a config.
type TemplateValidator struct{}

var _ admission.Validator[*bootstrapv1.OpenshiftAssistedConfigTemplate] = &TemplateValidator{}

// SetupWithManager registers the validating webhooks with mgr's webhook server.
func SetupWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &bootstrapv1.OpenshiftAssistedConfig{}).
		WithValidator(&ConfigValidator{}).
		Complete(); err != nil {
		return fmt.Errorf("registering the OpenshiftAssistedConfig webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &bootstrapv1.OpenshiftAssistedConfigTemplate{}).
		WithValidator(&TemplateValidator{}).
		Complete(); err != nil {
		return fmt.Errorf("registering the OpenshiftAssistedConfigTemplate webhook: %w", err)
	}
	return nil
}

// ValidateCreate checks the formats of a new config's spec.
func (*ConfigValidator) ValidateCreate(_ context.Context, c *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	return nil, validation.Invalid(bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfig").GroupKind(), c.Name, validation.ConfigSpec(field.NewPath("spec"), &c.Spec, nil))
}

// ValidateUpdate checks the formats of the spec fields that changed, and refuses a spec change
// when the old config reports its host installing or installed.
func (*ConfigValidator) ValidateUpdate(_ context.Context, oldConfig, newConfig *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	if apiequality.Semantic.DeepEqual(oldConfig.Spec, newConfig.Spec) {
		return nil, nil
	}
	errs := validation.ConfigSpec(field.NewPath("spec"), &newConfig.Spec, &oldConfig.Spec)
	if HostStartedInstalling(oldConfig) {
		agent := "its Agent"
		if oldConfig.Status.AgentRef != nil {
			agent = "Agent " + oldConfig.Status.AgentRef.Name
		}
		msg := fmt.Sprintf("the host of this config started installing (%s): assisted-service already took its settings and would not apply a change; "+
			"to change them, delete the Machine and let a new one be created with the new config", agent)
		errs = append(field.ErrorList{field.Forbidden(field.NewPath("spec"), msg)}, errs...)
	}
	return nil, validation.Invalid(bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfig").GroupKind(), newConfig.Name, errs)
}

// HostStartedInstalling tells whether the config reports its host installing or installed.
func HostStartedInstalling(c *bootstrapv1.OpenshiftAssistedConfig) bool {
	return conditions.IsTrue(c, bootstrapv1.InstallingCondition) || conditions.IsTrue(c, bootstrapv1.InstalledCondition)
}

// ValidateDelete accepts every deletion.
func (*ConfigValidator) ValidateDelete(context.Context, *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	return nil, nil
}

// ValidateCreate checks the formats of a new template's spec.template.spec.
func (*TemplateValidator) ValidateCreate(_ context.Context, t *bootstrapv1.OpenshiftAssistedConfigTemplate) (admission.Warnings, error) {
	return nil, validation.Invalid(bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfigTemplate").GroupKind(), t.Name,
		validation.ConfigSpec(field.NewPath("spec", "template", "spec"), &t.Spec.Template.Spec, nil))
}

// ValidateUpdate checks the formats of the fields of spec.template.spec that changed.
func (*TemplateValidator) ValidateUpdate(_ context.Context, oldT, newT *bootstrapv1.OpenshiftAssistedConfigTemplate) (admission.Warnings, error) {
	return nil, validation.Invalid(bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfigTemplate").GroupKind(), newT.Name,
		validation.ConfigSpec(field.NewPath("spec", "template", "spec"), &newT.Spec.Template.Spec, &oldT.Spec.Template.Spec))
}

// ValidateDelete accepts every deletion.
func (*TemplateValidator) ValidateDelete(context.Context, *bootstrapv1.OpenshiftAssistedConfigTemplate) (admission.Warnings, error) {
	return nil, nil
}
