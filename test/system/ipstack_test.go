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

package system

import (
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

// expectNetworks checks the networks of cluster ns/name's AgentClusterInstall: the pod networks
// (with their host prefixes), the API VIPs, the machine networks the control plane wrote (spec)
// and those assisted-service took (status: the spec's, or the hosts' network of the VIP).
func expectNetworks(l *lab.Lab, ns, name string, pods []hiveextv1beta1.ClusterNetworkEntry, apiVIPs, spec, status []string) {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
	cidrs := func(l []hiveextv1beta1.MachineNetworkEntry) []string {
		out := []string{}
		for _, e := range l {
			out = append(out, e.CIDR)
		}
		return out
	}
	Expect(aci.Spec.Networking.ClusterNetwork).To(Equal(pods))
	Expect(aci.Spec.APIVIPs).To(Equal(apiVIPs))
	Expect(aci.Spec.Networking.NetworkType).To(Equal("OVNKubernetes"))
	Expect(cidrs(aci.Spec.Networking.MachineNetwork)).To(Equal(spec), "the machine networks the control plane wrote")
	Expect(cidrs(aci.Status.MachineNetwork)).To(Equal(status), "the machine networks assisted-service took")
}
