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
	"strings"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// TestFencingCredentials: the fencing credentials are the BareMetalHost's BMC address and its
// credentials Secret's username and password, with certificate verification unless the host
// disables it; a host that cannot be fenced through redfish, or whose credentials are missing,
// is refused with a message that names what to fix and never quotes the password.
func TestFencingCredentials(t *testing.T) {
	host := func(address string, insecure bool) *bmov1alpha1.BareMetalHost {
		return &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "h0"},
			Spec: bmov1alpha1.BareMetalHostSpec{BMC: bmov1alpha1.BMCDetails{Address: address, CredentialsName: "h0-bmc", DisableCertificateVerification: insecure}}}
	}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "h0-bmc"}, Data: map[string][]byte{"username": []byte("admin"), "password": []byte("s3cr3t")}}
	redfish := "redfish-virtualmedia+https://10.0.0.1/redfish/v1/Systems/1"
	for _, tc := range []struct {
		name    string
		bmh     *bmov1alpha1.BareMetalHost
		secret  *corev1.Secret
		want    map[string]string
		problem string
	}{
		{"redfish virtual media", host(redfish, false), creds,
			map[string]string{"address": redfish, "username": "admin", "password": "s3cr3t", "certificateVerification": "Enabled"}, ""},
		{"certificate verification disabled", host("idrac-redfish://10.0.0.2/redfish/v1/Systems/System.Embedded.1", true), creds,
			map[string]string{"address": "idrac-redfish://10.0.0.2/redfish/v1/Systems/System.Embedded.1", "username": "admin", "password": "s3cr3t", "certificateVerification": "Disabled"}, ""},
		{"IPMI", host("ipmi://10.0.0.3", false), creds, nil, "BareMetalHost h0's BMC address uses ipmi"},
		{"no scheme", host("10.0.0.3:623", false), creds, nil, "uses ipmi: give the host a redfish BMC address"},
		{"no credentials Secret", host(redfish, false), nil, nil, `BMC credentials Secret "h0-bmc" does not exist`},
		{"no password", host(redfish, false), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "h0-bmc"}, Data: map[string][]byte{"username": []byte("admin")}},
			nil, "h0-bmc has no password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			data, problem := fencingCredentials(tc.bmh, tc.secret)
			if tc.problem != "" {
				g.Expect(problem).To(ContainSubstring(tc.problem))
				g.Expect(problem).NotTo(ContainSubstring("s3cr3t"))
				g.Expect(data).To(BeNil())
				return
			}
			g.Expect(problem).To(BeEmpty())
			got := map[string]string{}
			for k, v := range data {
				got[k] = string(v)
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

// TestNeedsFencing: only the Machines the control plane labels for fencing need credentials.
func TestNeedsFencing(t *testing.T) {
	g := NewWithT(t)
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{clusterv1.MachineControlPlaneLabel: ""}}}
	g.Expect(needsFencing(m)).To(BeFalse())
	m.Labels[controlplanev1.FencingMachineLabel] = ""
	g.Expect(needsFencing(m)).To(BeTrue())
	g.Expect(needsFencing(nil)).To(BeFalse())
	g.Expect(strings.HasSuffix(fencingSecretName("cp-0"), "-fencing-credentials")).To(BeTrue())
}
