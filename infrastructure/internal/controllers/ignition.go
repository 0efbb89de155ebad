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
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"time"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

const (
	// IgnitionTokenSecretKey is the key assisted-service reads the ignition endpoint token from.
	IgnitionTokenSecretKey = "ignition-token"
)

// ignitionSource is what a host needs to fetch its ignition: the endpoint's bearer token, any
// other HTTP headers, and the machine config pool that assisted-service appends to the
// AgentClusterInstall's endpoint URL (the last path segment of the source URL).
type ignitionSource struct {
	URL               string
	Token             string
	Headers           map[string]string
	MachineConfigPool string
}

// splitIgnitionURL splits an ignition URL into the endpoint assisted-service keeps in the
// AgentClusterInstall and the machine config pool it appends to it for each host: assisted-service
// builds a host's ignition URL as url.Path = path.Join(url.Path, pool), with the pool the Agent's
// spec.machineConfigPool or its role (GetIgnitionEndpoint, internal/host/hostutil). HyperShift's
// https://<ignition-server>/ignition is endpoint https://<ignition-server> and pool "ignition", as
// cluster-api-provider-agent splits it; a machine config server's .../config/worker is
// .../config and "worker". A URL without a path is all endpoint.
func splitIgnitionURL(raw string) (endpoint, pool string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw, ""
	}
	p := strings.TrimSuffix(u.Path, "/")
	i := strings.LastIndex(p, "/")
	if i < 0 || p[i+1:] == "" {
		return raw, ""
	}
	pool = p[i+1:]
	u.Path, u.RawPath = p[:i], ""
	return u.String(), pool
}

// The few fields of an Ignition v3 config that carry the merge source: the bootstrap provider
// writes a pointer config whose single merge source is the cluster's ignition endpoint.
type pointerIgnition struct {
	Ignition struct {
		Config struct {
			Merge []struct {
				Source      *string `json:"source"`
				HTTPHeaders []struct {
					Name  string  `json:"name"`
					Value *string `json:"value"`
				} `json:"httpHeaders"`
			} `json:"merge"`
		} `json:"config"`
	} `json:"ignition"`
}

// parseBootstrapData reads the ignition source from a bootstrap data Secret (keys "value" and
// "format", as the Cluster API bootstrap contract has them). Nothing of the Secret is returned in
// errors: it holds credentials.
func parseBootstrapData(secret *corev1.Secret) (ignitionSource, error) {
	if f := string(secret.Data["format"]); f != "" && f != bootstrapv1.BootstrapDataFormatIgnition {
		return ignitionSource{}, fmt.Errorf("bootstrap data format is %q, only %q is supported", f, bootstrapv1.BootstrapDataFormatIgnition)
	}
	value, ok := secret.Data["value"]
	if !ok || len(value) == 0 {
		return ignitionSource{}, errors.New("bootstrap data Secret has no \"value\"")
	}
	var cfg pointerIgnition
	if err := json.Unmarshal(value, &cfg); err != nil {
		return ignitionSource{}, errors.New("bootstrap data is not an Ignition JSON document")
	}
	out := ignitionSource{Headers: map[string]string{}}
	for _, m := range cfg.Ignition.Config.Merge {
		if m.Source != nil && out.URL == "" {
			out.URL = *m.Source
		}
		for _, h := range m.HTTPHeaders {
			if h.Value == nil {
				continue
			}
			if strings.EqualFold(h.Name, "Authorization") {
				if token, ok := strings.CutPrefix(*h.Value, "Bearer "); ok {
					out.Token = strings.TrimSpace(token)
					continue
				}
			}
			out.Headers[h.Name] = *h.Value
		}
	}
	if len(out.Headers) == 0 {
		out.Headers = nil
	}
	_, out.MachineConfigPool = splitIgnitionURL(out.URL)
	return out, nil
}

// bootstrapData reads a Machine's bootstrap data Secret: from SecretReader, the cache of the
// Secrets that carry their Cluster's name label (as Cluster API's bootstrap providers, ours
// included, label their data), else from the API server (HyperShift's user-data Secrets have no
// such label).
func (r *AgentMachineReconciler) bootstrapData(ctx context.Context, key client.ObjectKey) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if r.SecretReader != nil {
		if err := r.SecretReader.Get(ctx, key, secret); err == nil || !apierrors.IsNotFound(err) {
			return secret, err
		}
	}
	return secret, r.Client.Get(ctx, key, secret)
}

// refreshIgnition follows the bootstrap data of a claimed host until it is installed. HyperShift
// rotates the ignition token in the Machine's user-data Secret (and the NodePool's config changes
// its headers); a host that fetches its ignition with a stale token is refused.
// cluster-api-provider-agent rewrites the token Secret on every reconcile. Secrets are not cached
// here, so the bootstrap data is read again every IgnitionTokenRefreshPeriod (not right after the
// claim, which read it), and the token Secret and the Agent's headers are written only when they
// changed.
func (r *AgentMachineReconciler) refreshIgnition(ctx context.Context, s *scope, agent *aiv1beta1.Agent, claimedNow bool) (ctrl.Result, error) {
	period := r.IgnitionTokenRefreshPeriod
	if period == 0 {
		period = DefaultIgnitionTokenRefreshPeriod
	}
	if period < 0 || agent.Spec.IgnitionEndpointTokenReference == nil || s.machine.Spec.Bootstrap.DataSecretName == nil ||
		conditionsv1.IsStatusConditionTrue(agent.Status.Conditions, aiv1beta1.InstalledCondition) {
		return ctrl.Result{}, nil
	}
	am := s.agentMachine
	now := time.Now()
	if claimedNow {
		r.tokensRead.Store(am.UID, now)
		return ctrl.Result{RequeueAfter: period}, nil
	}
	// At most once per period: the reconciles a claimed host's Agent starts (assisted-service
	// updates it often during an install) do not each read the Secret.
	if last, ok := r.tokensRead.Load(am.UID); ok {
		if wait := period - now.Sub(last.(time.Time)); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	r.tokensRead.Store(am.UID, now)
	key := client.ObjectKey{Namespace: s.machine.Namespace, Name: *s.machine.Spec.Bootstrap.DataSecretName}
	secret, err := r.bootstrapData(ctx, key)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{RequeueAfter: period}, nil // the host keeps the token it has
		}
		return ctrl.Result{}, fmt.Errorf("getting bootstrap data Secret %s: %w", key.Name, err)
	}
	source, err := parseBootstrapData(secret)
	if err != nil || source.Token == "" {
		return ctrl.Result{RequeueAfter: period}, nil //nolint:nilerr // a claim read it; a broken update is not followed
	}
	sum := sha256.Sum256([]byte(source.Token))
	if last, ok := r.tokens.Load(am.UID); !ok || last.([sha256.Size]byte) != sum {
		_, updated, err := r.ensureTokenSecret(ctx, am, source.Token)
		if err != nil {
			return ctrl.Result{}, err
		}
		r.tokens.Store(am.UID, sum)
		if updated && ok {
			r.Recorder.Eventf(am, agent, corev1.EventTypeNormal, "IgnitionTokenRefreshed", "Refresh",
				"The ignition token in bootstrap data Secret %s changed; Agent %s fetches its ignition with the new one", key.Name, agent.Name)
		}
	}
	if !maps.Equal(agent.Spec.IgnitionEndpointHTTPHeaders, source.Headers) {
		before := agent.DeepCopy()
		agent.Spec.IgnitionEndpointHTTPHeaders = source.Headers
		if err := r.Client.Patch(ctx, agent, lockedPatch(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("updating the ignition headers of Agent %s/%s: %w", agent.Namespace, agent.Name, err)
		}
	}
	return ctrl.Result{RequeueAfter: period}, nil
}
