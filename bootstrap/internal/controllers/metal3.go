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
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// metal3HostAnnotation is the annotation, `<namespace>/<name>`, through which CAPM3 names the
	// BareMetalHost of a Metal3Machine (baremetal.HostAnnotation in CAPM3).
	metal3HostAnnotation = "metal3.io/BareMetalHost"
	// liveISODiskFormat makes CAPM3 and the BareMetalHost boot the image as a live ISO.
	liveISODiskFormat = "live-iso"
)

// isMetal3Machine tells whether the Machine's infrastructure is a CAPM3 Metal3Machine.
func isMetal3Machine(machine *clusterv1.Machine) bool {
	ref := machine.Spec.InfrastructureRef
	return ref.Kind == "Metal3Machine" && ref.APIGroup == capm3v1beta2.GroupVersion.Group
}

// metal3MachineFor returns the Machine's Metal3Machine, or nil while it does not exist.
func metal3MachineFor(ctx context.Context, c client.Reader, machine *clusterv1.Machine) (*capm3v1beta2.Metal3Machine, error) {
	m3m := &capm3v1beta2.Metal3Machine{}
	key := client.ObjectKey{Namespace: machine.Namespace, Name: machine.Spec.InfrastructureRef.Name}
	if err := c.Get(ctx, key, m3m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting Metal3Machine %s: %w", key, err)
	}
	return m3m, nil
}

// bareMetalHostFor returns the BareMetalHost CAPM3 associated with m3m, or nil while there is none.
func bareMetalHostFor(ctx context.Context, c client.Reader, m3m *capm3v1beta2.Metal3Machine) (*bmov1alpha1.BareMetalHost, error) {
	value := m3m.Annotations[metal3HostAnnotation]
	if value == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(value, "/")
	if !ok {
		return nil, fmt.Errorf("annotation %s=%q of Metal3Machine %s is not <namespace>/<name>", metal3HostAnnotation, value, m3m.Name)
	}
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, bmh); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting BareMetalHost %s: %w", value, err)
	}
	return bmh, nil
}

// hasISO tells whether m3m boots exactly the live ISO at isoURL.
func hasISO(m3m *capm3v1beta2.Metal3Machine, isoURL string) bool {
	return m3m.Spec.Image.URL == isoURL && m3m.Spec.Image.DiskFormat == liveISODiskFormat
}
