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
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

const (
	// IgnitionTokenSecretKey is the key assisted-service reads the ignition endpoint token from.
	IgnitionTokenSecretKey = "ignition-token"
)

// ignitionSource is what a host needs to fetch its ignition: the endpoint's bearer token and any
// other HTTP headers. The endpoint URL itself is the AgentClusterInstall's.
type ignitionSource struct {
	URL     string
	Token   string
	Headers map[string]string
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
	return out, nil
}
