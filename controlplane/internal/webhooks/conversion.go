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

package webhooks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/contract"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// contractLabels are the CRD labels, newest contract first, through which a provider names the
// versions of its kinds that implement a Cluster API contract (cluster.x-k8s.io/v1beta2:
// "v1alpha1_v1beta1"); Cluster API's contract.GetAPIVersion reads them in the same order.
var contractLabels = []string{clusterv1.GroupVersion.String(), clusterv1.GroupVersion.Group + "/v1beta1"}

// ContractAPIVersion returns a lookup of the apiVersion of a kind that Cluster API uses: the
// newest version the kind's CRD lists for the newest contract it labels. c reads the CRDs'
// metadata (the control-plane provider's cached client, which already watches them).
func ContractAPIVersion(c client.Reader) func(schema.GroupKind) (string, error) {
	return func(gk schema.GroupKind) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		name := contract.CalculateCRDName(gk.Group, gk.Kind)
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return "", fmt.Errorf("reading CRD %s: %w", name, err)
		}
		for _, label := range contractLabels {
			versions := slices.DeleteFunc(strings.Split(crd.Labels[label], "_"), func(v string) bool { return v == "" })
			if len(versions) == 0 {
				continue
			}
			slices.SortFunc(versions, version.CompareKubeAwareVersionStrings)
			return schema.GroupVersion{Group: gk.Group, Version: versions[len(versions)-1]}.String(), nil
		}
		return "", fmt.Errorf("CRD %s has no Cluster API contract label (%s)", name, strings.Join(contractLabels, ", "))
	}
}
