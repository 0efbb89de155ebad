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
	"maps"
	"regexp"
	"slices"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoavalidation "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/validation"
)

// Host metadata variables, as the upstream bootstrap provider (openshift-assisted/cluster-api-
// provider-openshift-assisted) lets nodeRegistration.name and kubeletExtraLabels values name them:
// $METADATA_NAME or ${METADATA_NAME}. Upstream resolves them on the host: a systemd unit reads
// the Metal3 config drive's openstack/latest/meta_data.json and writes each key as
// METADATA_<KEY, upper case, "-" as "_"> to /etc/metadata_env, which set-hostname.service and the
// kubelet labels read. Here they are resolved on the hub from the same source the config drive is
// written from: baremetal-operator builds meta_data.json from defaults of the BareMetalHost
// (uuid: its UID; metal3-namespace, metal3-name, local-hostname, local_hostname, name: its
// namespace and name) overridden by the YAML of the Secret its spec.metaData references, key
// "metaData" (baremetal-operator pkg/provisioner/ironic, buildConfigDrive), the Secret that CAPM3
// renders from the Metal3DataTemplate. The values then reach the Agent (hostname, node labels).

// variable returns the variable a whole value names ($NAME or ${NAME}), if it is one.
func variable(value string) (string, bool) { return capoavalidation.MetadataVariable(value) }

// isVariable tells whether a whole value names a variable.
func isVariable(value string) bool { _, ok := variable(value); return ok }

// metadataReference matches a host metadata variable inside a value: $METADATA_X or
// ${METADATA_X}.
var metadataReference = regexp.MustCompile(`[$]([{]METADATA_[A-Z0-9_]+[}]|METADATA_[A-Z0-9_]+)`)

// usesMetadata tells whether the config names host metadata variables.
func usesMetadata(config *bootstrapv1.OpenshiftAssistedConfig) bool {
	if isVariable(config.Spec.NodeRegistration.Name) {
		return true
	}
	if metadataReference.MatchString(config.Spec.NodeRegistration.ProviderID) {
		return true
	}
	for _, kv := range config.Spec.NodeRegistration.KubeletExtraLabels {
		if _, v, _ := strings.Cut(kv, "="); isVariable(capoavalidation.KubeletLabelValue(v)) {
			return true
		}
	}
	return false
}

// metadataEnv returns the host metadata variables of bmh (see above). A metaData Secret that
// is referenced but not there yet is an error: the caller waits.
func metadataEnv(ctx context.Context, c client.Reader, bmh *bmov1alpha1.BareMetalHost) (map[string]string, error) {
	defaults := map[string]any{
		"uuid": string(bmh.UID), "metal3-namespace": bmh.Namespace, "metal3-name": bmh.Name,
		"local-hostname": bmh.Name, "local_hostname": bmh.Name, "name": bmh.Name,
	}
	var meta map[string]any
	if ref := bmh.Spec.MetaData; ref != nil && ref.Name != "" {
		// A Secret of another namespace is never read: baremetal-operator's webhook refuses such
		// references (validateCrossNamespaceSecretReferences, "cross-namespace Secret references
		// are not allowed"), and following one would read another tenant's Secret.
		if ref.Namespace != "" && ref.Namespace != bmh.Namespace {
			return nil, fmt.Errorf("the metaData Secret of BareMetalHost %s is in another namespace, which is never read "+
				"(baremetal-operator refuses cross-namespace Secret references too): reference a Secret of namespace %s", bmh.Name, bmh.Namespace)
		}
		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: bmh.Namespace, Name: ref.Name}, secret); err != nil {
			return nil, fmt.Errorf("reading the metaData Secret %s of BareMetalHost %s: %w", ref.Name, bmh.Name, err)
		}
		if raw := secret.Data["metaData"]; len(raw) > 0 {
			// Numbers as json.Number: their text in the meta_data.json baremetal-operator writes
			// (12345678, where fmt would print a float64 1.2345678e+07).
			if err := yaml.Unmarshal(raw, &meta, func(d *json.Decoder) *json.Decoder { d.UseNumber(); return d }); err != nil {
				return nil, fmt.Errorf("the metaData Secret %s of BareMetalHost %s is not a YAML map: %w", ref.Name, bmh.Name, err)
			}
		}
	}
	// Two keys can name one variable (local-hostname and local_hostname): the Secret's key wins
	// over a default, and among keys of one source the last in sorted order, so that the variable
	// is the same in every reconcile.
	env := make(map[string]string, len(defaults)+len(meta))
	for _, m := range []map[string]any{defaults, meta} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			env["METADATA_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_"))] = fmt.Sprint(m[k])
		}
	}
	return env, nil
}

// expand returns value with the variable it names (if any) resolved from env, which is nil when
// the host has no Metal3 metadata.
func expand(value string, env map[string]string) (string, error) {
	name, ok := variable(value)
	if !ok {
		return value, nil
	}
	if env == nil {
		return "", fmt.Errorf("%s names a host metadata variable, which only a Metal3 host (a BareMetalHost's metadata) provides; this Machine has none: write the value itself", value)
	}
	v, ok := env[name]
	if !ok {
		known := make([]string, 0, len(env))
		for k := range env {
			known = append(known, k)
		}
		slices.Sort(known)
		return "", fmt.Errorf("%s names no metadata of the host (it has %s): correct the variable or add the key to the Metal3DataTemplate's metaData", value, strings.Join(known, ", "))
	}
	return v, nil
}

// expandAll returns value with every host metadata variable in it resolved from env, as the
// upstream provider's providerID injector expands the value on the host (with eval, after
// sourcing the host's metadata).
func expandAll(value string, env map[string]string) (string, error) {
	var firstErr error
	out := metadataReference.ReplaceAllStringFunc(value, func(ref string) string {
		v, err := expand(ref, env)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	})
	return out, firstErr
}

// resolvedProviderID is the providerID the Machine's kubelet registers with: nodeRegistration.
// providerID resolved from env, "" when unset. One that differs from the providerID the
// infrastructure provider already reports for the Machine is an error: Cluster API finds a
// Machine's Node by that providerID and would never find it.
func resolvedProviderID(config *bootstrapv1.OpenshiftAssistedConfig, machine *clusterv1.Machine, env map[string]string) (string, error) {
	id := config.Spec.NodeRegistration.ProviderID
	if id == "" {
		return "", nil
	}
	id, err := expandAll(id, env)
	if err != nil {
		return "", fmt.Errorf("nodeRegistration.providerID: %w", err)
	}
	if machine.Spec.ProviderID != "" && machine.Spec.ProviderID != id {
		return "", fmt.Errorf("nodeRegistration.providerID resolves to %q, but the infrastructure provider reports %q for Machine %s: "+
			"Cluster API would never find the Machine's Node; remove providerID or make it resolve to the infrastructure provider's", id, machine.Spec.ProviderID, machine.Name)
	}
	return id, nil
}

// resolvedHostname is the hostname the Machine's host is installed with, nodeRegistration.name
// resolved from env, else the Machine's name.
func resolvedHostname(config *bootstrapv1.OpenshiftAssistedConfig, machineName string, env map[string]string) (string, error) {
	if config.Spec.NodeRegistration.Name == "" {
		return machineName, nil
	}
	name, err := expand(config.Spec.NodeRegistration.Name, env)
	if err != nil {
		return "", fmt.Errorf("nodeRegistration.name: %w", err)
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return "", fmt.Errorf("nodeRegistration.name %s resolves to %q, which is not a hostname: %s", config.Spec.NodeRegistration.Name, name, strings.Join(msgs, "; "))
	}
	return name, nil
}
