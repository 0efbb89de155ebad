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
	"testing"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// TestAvailableConditions: the Available and KubeconfigAvailable conditions through an install,
// and after it. Once the cluster is installed and its kubeconfig written (ControlPlaneInitialized),
// a reconcile that stops before the kubeconfig step (a conflict writing the AgentClusterInstall, a
// registry that does not answer) leaves the control plane Available: it flipped to False,
// "waiting for the admin kubeconfig", for a moment after such an error, which the Cluster's
// Available condition and every alert on it repeated (a system spec saw it in CI).
func TestAvailableConditions(t *testing.T) {
	aci := func(state string, conds ...hivev1.ClusterInstallCondition) *hiveextv1beta1.AgentClusterInstall {
		return &hiveextv1beta1.AgentClusterInstall{Status: hiveextv1beta1.AgentClusterInstallStatus{
			DebugInfo: hiveextv1beta1.DebugInfo{State: state}, Conditions: conds}}
	}
	// initialized: a control plane whose kubeconfig a reconcile wrote before.
	initialized := func(s scope) scope {
		s.oacp = &controlplanev1.OpenshiftAssistedControlPlane{}
		s.oacp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.KubeconfigAvailableCondition, Status: metav1.ConditionTrue,
			Reason: controlplanev1.KubeconfigAvailableReason})
		return s
	}
	for _, tc := range []struct {
		name                  string
		s                     scope
		available, kubeconfig metav1.ConditionStatus
		reason                string
	}{
		{"no AgentClusterInstall yet", scope{}, metav1.ConditionFalse, metav1.ConditionFalse, controlplanev1.WaitingForClusterReason},
		{"installing", scope{aci: aci("installing")}, metav1.ConditionFalse, metav1.ConditionFalse, controlplanev1.InstallingReason},
		{"failed", scope{aci: aci("error", hivev1.ClusterInstallCondition{Type: hivev1.ClusterInstallFailed, Status: corev1.ConditionTrue, Message: "boom"})},
			metav1.ConditionFalse, metav1.ConditionFalse, controlplanev1.InstallFailedReason},
		{"installed, kubeconfig not copied yet", scope{aci: aci("installed"), kubeconfigChecked: true}, metav1.ConditionFalse, metav1.ConditionFalse, controlplanev1.KubeconfigNotAvailableReason},
		{"installed, kubeconfig written now", scope{aci: aci("installed"), kubeconfigWritten: true, kubeconfigChecked: true}, metav1.ConditionTrue, metav1.ConditionTrue, controlplanev1.InstalledReason},
		{"initialized, the reconcile stopped before the kubeconfig step", initialized(scope{aci: aci("installed")}),
			metav1.ConditionTrue, metav1.ConditionTrue, controlplanev1.InstalledReason},
		{"initialized, taking day-2 hosts, the reconcile stopped early", initialized(scope{aci: aci("adding-hosts")}),
			metav1.ConditionTrue, metav1.ConditionTrue, controlplanev1.InstalledReason},
		{"initialized, the reconcile stopped before reading the AgentClusterInstall", initialized(scope{}),
			metav1.ConditionTrue, metav1.ConditionTrue, controlplanev1.InstalledReason},
		{"initialized, the admin kubeconfig Secret is gone", initialized(scope{aci: aci("installed"), kubeconfigChecked: true}),
			metav1.ConditionFalse, metav1.ConditionFalse, controlplanev1.KubeconfigNotAvailableReason},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			if s.oacp == nil {
				s.oacp = &controlplanev1.OpenshiftAssistedControlPlane{}
			}
			setAvailableConditions(&s)
			got := conditions.Get(s.oacp, controlplanev1.AvailableCondition)
			if got == nil || got.Status != tc.available || got.Reason != tc.reason {
				t.Errorf("Available = %+v, want %s %s", got, tc.available, tc.reason)
			}
			if got != nil && got.Status == metav1.ConditionTrue && got.Message != "" {
				t.Errorf("a healthy Available carries a message: %q", got.Message)
			}
			if k := conditions.Get(s.oacp, controlplanev1.KubeconfigAvailableCondition); k == nil || k.Status != tc.kubeconfig {
				t.Errorf("KubeconfigAvailable = %+v, want %s", k, tc.kubeconfig)
			}
		})
	}
}
