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

package validation

import (
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// ProxySettings are the fields of assisted-service's proxy types (the InfraEnv's and the
// AgentClusterInstall's have the same three).
type ProxySettings struct {
	HTTPProxy  string
	HTTPSProxy string
	NoProxy    string
}

// Proxy checks the proxy settings p (nil: no proxy) at path. With old (the stored settings, nil
// on create or when none were set) only the fields that changed are checked.
func Proxy(path *field.Path, p, old *ProxySettings) field.ErrorList {
	if p == nil {
		return nil
	}
	if old == nil {
		old = &ProxySettings{}
	}
	var errs field.ErrorList
	if p.HTTPProxy != "" && p.HTTPProxy != old.HTTPProxy {
		errs = Append(errs, ProxyURL(path.Child("httpProxy"), p.HTTPProxy, "http"))
	}
	if p.HTTPSProxy != "" && p.HTTPSProxy != old.HTTPSProxy {
		errs = Append(errs, ProxyURL(path.Child("httpsProxy"), p.HTTPSProxy, "http", "https"))
	}
	if p.NoProxy != "" && p.NoProxy != old.NoProxy {
		errs = Append(errs, NoProxy(path.Child("noProxy"), p.NoProxy))
	}
	return errs
}

// ConfigSpec checks the formats of the OpenshiftAssistedConfigSpec spec at path (spec of an
// OpenshiftAssistedConfig, spec.template.spec of its template, spec.openshiftAssistedConfigSpec
// of a control plane). old is the stored spec on update, nil on create: on update only the
// fields that changed are checked, and in lists only the items that are new. The CRD schema
// checks the rest (additionalNTPSources, cpuArchitecture, nodeRegistration.name).
func ConfigSpec(path *field.Path, spec, old *bootstrapv1.OpenshiftAssistedConfigSpec) field.ErrorList {
	if old == nil {
		old = &bootstrapv1.OpenshiftAssistedConfigSpec{}
	}
	var errs field.ErrorList
	if spec.Proxy != nil && !apiequality.Semantic.DeepEqual(spec.Proxy, old.Proxy) {
		var oldProxy *ProxySettings
		if old.Proxy != nil {
			oldProxy = &ProxySettings{HTTPProxy: old.Proxy.HTTPProxy, HTTPSProxy: old.Proxy.HTTPSProxy, NoProxy: old.Proxy.NoProxy}
		}
		errs = append(errs, Proxy(path.Child("proxy"),
			&ProxySettings{HTTPProxy: spec.Proxy.HTTPProxy, HTTPSProxy: spec.Proxy.HTTPSProxy, NoProxy: spec.Proxy.NoProxy}, oldProxy)...)
	}
	if spec.PullSecretRef != nil && (old.PullSecretRef == nil || spec.PullSecretRef.Name != old.PullSecretRef.Name) {
		errs = Append(errs, ObjectName(path.Child("pullSecretRef", "name"), spec.PullSecretRef.Name))
	}
	if spec.SSHAuthorizedKey != old.SSHAuthorizedKey {
		errs = Append(errs, SSHAuthorizedKeys(path.Child("sshAuthorizedKey"), spec.SSHAuthorizedKey))
	}
	if !apiequality.Semantic.DeepEqual(spec.NMStateConfigLabelSelector, old.NMStateConfigLabelSelector) {
		errs = append(errs, LabelSelector(path.Child("nmStateConfigLabelSelector"), &spec.NMStateConfigLabelSelector)...)
	}
	if spec.AdditionalTrustBundle != "" && spec.AdditionalTrustBundle != old.AdditionalTrustBundle {
		errs = Append(errs, CertificateBundle(path.Child("additionalTrustBundle"), spec.AdditionalTrustBundle))
	}
	labels := path.Child("nodeRegistration", "kubeletExtraLabels")
	for i, kv := range spec.NodeRegistration.KubeletExtraLabels {
		if !slices.Contains(old.NodeRegistration.KubeletExtraLabels, kv) {
			errs = Append(errs, KubeletLabel(labels.Index(i), kv))
		}
	}
	return errs
}

// Append appends err to errs unless it is nil (the checks of this package return nil when a
// value is valid).
func Append(errs field.ErrorList, err *field.Error) field.ErrorList {
	if err == nil {
		return errs
	}
	return append(errs, err)
}

// Invalid is the admission error of an object of kind gk named name whose spec has errs, or nil
// when errs is empty.
func Invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, name, errs)
}
