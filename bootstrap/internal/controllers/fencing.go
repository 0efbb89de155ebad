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
	"errors"
	"fmt"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// Two-node OpenShift with fencing (spec.fencing of the control plane, which labels its Machines
// controlplanev1.FencingMachineLabel): assisted-service installs it when both control-plane hosts
// have fencing credentials, which its Agent controller reads from the Secret that the Agent's
// spec.fencingCredentialsSecretRef names, in the Agent's namespace, keys address, username,
// password and (optional) certificateVerification (assisted-service 063b2579,
// internal/controller/controllers/agent_controller.go updateHostFencingCredentials). This
// provider writes that Secret from the host's BareMetalHost as assisted-service's own
// BareMetalHost agent controller does for hosts annotated
// bmac.agent-install.openshift.io/create-fencing-credentials-secret (bmh_agent_controller.go
// reconcileFencingCredentialsSecret): the BMC address, the username and password of the BMC
// credentials Secret, certificateVerification Disabled when the host disables it. It is owned by
// the host's config, so it goes with the Machine and the cluster. Nothing of it is logged or
// reported: conditions and events name the Secrets and keys, never their values.

// fencingCredentialsSecretRefField is the Agent field that names the fencing credentials Secret
// (Spec.FencingCredentialsSecretRef in assisted-service's api/v1beta1 from 2025; the Go types
// this project pins lack it).
var fencingCredentialsSecretRefField = []string{"spec", "fencingCredentialsSecretRef"}

// Keys of the fencing credentials Secret (assisted-service's Agent controller; cluster-etcd-
// operator's pkg/tnf/pkg/pcs/fencing.go reads the same keys from the installed cluster's copy).
const (
	fencingAddressKey                 = "address"
	fencingUsernameKey                = "username"
	fencingPasswordKey                = "password"
	fencingCertificateVerificationKey = "certificateVerification"
)

// fencingSecretName is the name of the fencing credentials Secret of a config's host.
func fencingSecretName(config string) string { return config + "-fencing-credentials" }

// needsFencing tells whether the Machine's host needs fencing credentials.
func needsFencing(machine *clusterv1.Machine) bool {
	return machine != nil && metav1.HasLabel(machine.ObjectMeta, controlplanev1.FencingMachineLabel)
}

// fencingCredentials builds the fencing credentials Secret's data from the host's BareMetalHost
// and its BMC credentials Secret, or says why it cannot (never quoting the Secret's values).
// cluster-etcd-operator configures pacemaker's fence_redfish from the address and refuses one
// without "redfish" in it (pkg/tnf/pkg/pcs/fencing.go getFencingConfig), so such a host could not
// be fenced once installed: it is refused here, before anything is installed.
func fencingCredentials(bmh *bmov1alpha1.BareMetalHost, bmc *corev1.Secret) (map[string][]byte, string) {
	address := bmh.Spec.BMC.Address
	if !strings.Contains(address, "redfish") {
		return nil, fmt.Sprintf("two-node OpenShift with fencing powers a failed node off through redfish (pacemaker's fence_redfish), and BareMetalHost %s's BMC address uses %s: "+
			"give the host a redfish BMC address (redfish://, redfish-virtualmedia://, idrac-redfish://...), or create the cluster with spec.arbiter", bmh.Name, bmcDriverOf(address))
	}
	if bmc == nil {
		return nil, fmt.Sprintf("BareMetalHost %s's BMC credentials Secret %q does not exist: create it (keys username and password) or fix spec.bmc.credentialsName", bmh.Name, bmh.Spec.BMC.CredentialsName)
	}
	for _, k := range []string{fencingUsernameKey, fencingPasswordKey} {
		if len(bmc.Data[k]) == 0 {
			return nil, fmt.Sprintf("BareMetalHost %s's BMC credentials Secret %s has no %s: add it (the fencing credentials are the BMC's)", bmh.Name, bmc.Name, k)
		}
	}
	verification := "Enabled"
	if bmh.Spec.BMC.DisableCertificateVerification {
		verification = "Disabled"
	}
	return map[string][]byte{
		fencingAddressKey:                 []byte(address),
		fencingUsernameKey:                bmc.Data[fencingUsernameKey],
		fencingPasswordKey:                bmc.Data[fencingPasswordKey],
		fencingCertificateVerificationKey: []byte(verification),
	}, ""
}

// bmcDriverOf is the driver part of a BMC address (its scheme; IPMI without one), for messages.
func bmcDriverOf(address string) string {
	scheme, _, ok := strings.Cut(address, "://")
	if !ok {
		return "ipmi"
	}
	return scheme
}

// reconcileFencing gives the Agent of a host of two-node OpenShift with fencing its credentials:
// the Secret beside the Agent, then the Agent's spec.fencingCredentialsSecretRef, by a merge
// patch of that field alone with strict field validation. It returns a problem (for the config's
// condition) when it cannot; the Agent is then not approved.
func (r *OpenshiftAssistedConfigReconciler) reconcileFencing(ctx context.Context, s *scope, agent *aiv1beta1.Agent) (string, error) {
	c, bmh := s.config, s.bareMetalHost
	if bmh == nil {
		return fmt.Sprintf("two-node OpenShift with fencing takes each control-plane host's fencing credentials from its BareMetalHost, and Machine %s's host has none: "+
			"create the cluster with Metal3 hosts (a Metal3MachineTemplate), or with spec.arbiter", s.machine.Name), nil
	}
	if agent.Namespace != c.Namespace {
		// The Secret stays in the config's namespace, owned by the config: never another tenant's.
		return fmt.Sprintf("Agent %s is in namespace %s, not in the config's: its fencing credentials are not copied to another namespace", agent.Name, agent.Namespace), nil
	}
	var bmc *corev1.Secret
	if name := bmh.Spec.BMC.CredentialsName; name != "" {
		bmc = &corev1.Secret{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: bmh.Namespace, Name: name}, bmc); err != nil {
			if !apierrors.IsNotFound(err) {
				return "", fmt.Errorf("reading the BMC credentials Secret of BareMetalHost %s: %w", bmh.Name, err)
			}
			bmc = nil
		}
	}
	data, problem := fencingCredentials(bmh, bmc)
	if problem != "" {
		return problem, nil
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: fencingSecretName(c.Name)}}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, secret, func() error {
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels[clusterv1.ClusterNameLabel] = s.machine.Spec.ClusterName
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = data
		return controllerutil.SetControllerReference(c, secret, r.Client.Scheme())
	}); err != nil {
		return "", fmt.Errorf("writing the fencing credentials Secret %s: %w", secret.Name, err)
	}
	return r.setFencingCredentialsSecretRef(ctx, agent, secret.Name)
}

// setFencingCredentialsSecretRef sets the Agent's spec.fencingCredentialsSecretRef to name, read
// live (the client caches no unstructured objects) and patched only when it differs. A hub whose
// Agent CRD lacks the field refuses the strict patch: a problem saying so.
func (r *OpenshiftAssistedConfigReconciler) setFencingCredentialsSecretRef(ctx context.Context, agent *aiv1beta1.Agent, name string) (string, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(aiv1beta1.GroupVersion.WithKind("Agent"))
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(agent), live); err != nil {
		return "", fmt.Errorf("reading Agent %s: %w", agent.Name, err)
	}
	if got, _, _ := unstructured.NestedString(live.Object, fencingCredentialsSecretRefField...); got == name {
		return "", nil
	}
	patch := map[string]any{}
	if err := unstructured.SetNestedField(patch, name, fencingCredentialsSecretRefField...); err != nil {
		return "", err
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return "", err
	}
	err = r.Client.Patch(ctx, live, client.RawPatch(types.MergePatchType, raw), client.FieldValidation(metav1.FieldValidationStrict))
	switch {
	case err == nil:
		return "", nil
	case apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "fencingCredentialsSecretRef"):
		return "the hub's assisted-service does not support two-node OpenShift with fencing: its Agent has no spec.fencingCredentialsSecretRef; " +
			"upgrade the hub's assisted-service (multicluster engine), or create the cluster with spec.arbiter", nil
	}
	return "", errors.Join(fmt.Errorf("setting the fencing credentials of Agent %s", agent.Name), err)
}

// hostInstallStarted tells whether the Agent's host has started installing (or is done): its
// fencing credentials are read by assisted-service before, and are fixed after.
func hostInstallStarted(agent *aiv1beta1.Agent) bool {
	switch agentState(agent) {
	case models.HostStatusPreparingForInstallation, models.HostStatusPreparingSuccessful, models.HostStatusInstalling,
		models.HostStatusInstallingInProgress, models.HostStatusInstallingPendingUserAction, models.HostStatusInstalled,
		models.HostStatusAddedToExistingCluster, models.HostStatusError:
		return true
	}
	return false
}
