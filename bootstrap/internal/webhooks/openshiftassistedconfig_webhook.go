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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// +kubebuilder:webhook:verbs=update,path=/validate-bootstrap-cluster-x-k8s-io-v1alpha2-openshiftassistedconfig,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,versions=v1alpha2,name=validation.openshiftassistedconfig.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// ConfigValidator refuses changes to an OpenshiftAssistedConfig's spec once its host started
// installing: assisted-service took the settings when the host registered and would not apply
// the change.
type ConfigValidator struct{}

var _ admission.Validator[*bootstrapv1.OpenshiftAssistedConfig] = &ConfigValidator{}

// SetupWithManager registers the validating webhook with mgr's webhook server.
func SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &bootstrapv1.OpenshiftAssistedConfig{}).
		WithValidator(&ConfigValidator{}).
		Complete()
}

// ValidateCreate accepts every new config (the schema validates it).
func (*ConfigValidator) ValidateCreate(context.Context, *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate refuses a spec change when the old config reports its host installing or installed.
func (*ConfigValidator) ValidateUpdate(_ context.Context, oldConfig, newConfig *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	if apiequality.Semantic.DeepEqual(oldConfig.Spec, newConfig.Spec) {
		return nil, nil
	}
	if !HostStartedInstalling(oldConfig) {
		return nil, nil
	}
	agent := "its Agent"
	if oldConfig.Status.AgentRef != nil {
		agent = "Agent " + oldConfig.Status.AgentRef.Name
	}
	msg := fmt.Sprintf("the host of this config started installing (%s): assisted-service already took its settings and would not apply a change; "+
		"to change them, delete the Machine and let a new one be created with the new config", agent)
	return nil, apierrors.NewInvalid(bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfig").GroupKind(), newConfig.Name,
		field.ErrorList{field.Forbidden(field.NewPath("spec"), msg)})
}

// HostStartedInstalling tells whether the config reports its host installing or installed.
func HostStartedInstalling(c *bootstrapv1.OpenshiftAssistedConfig) bool {
	return conditions.IsTrue(c, bootstrapv1.InstallingCondition) || conditions.IsTrue(c, bootstrapv1.InstalledCondition)
}

// ValidateDelete accepts every deletion.
func (*ConfigValidator) ValidateDelete(context.Context, *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	return nil, nil
}
