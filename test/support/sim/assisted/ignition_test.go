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

package assisted

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
)

const (
	testServiceURL = "https://127.0.0.1:8443"
	testInfraEnvID = "5c8d4d9a-0e3b-4f6e-9e2c-7c1f2a3b4c5d"
)

// TestTokens: the service verifies the tokens it signed, with their scope and resource, and no
// other: altered, or signed with another key.
func TestTokens(t *testing.T) {
	newSim := func() *Simulator {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return &Simulator{api: &restAPI{key: key}}
	}
	s, other := newSim(), newSim()
	tok, err := s.token(infraEnvScope, testInfraEnvID)
	if err != nil {
		t.Fatal(err)
	}
	scope, id, err := s.verifyToken(tok)
	if err != nil || scope != infraEnvScope || id != testInfraEnvID {
		t.Fatalf("verifyToken = %s, %s, %v; want the InfraEnv's", scope, id, err)
	}
	parts := strings.Split(tok, ".")
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || string(claims) != `{"infra_env_id":"`+testInfraEnvID+`"}` {
		t.Fatalf("claims %s (%v), want gencrypto.LocalJWT's", claims, err)
	}
	if again, _ := s.token(infraEnvScope, testInfraEnvID); again == tok {
		t.Error("two tokens are the same: ES256 signatures are randomised")
	}
	if tok2, _ := s.token(clusterScope, "c1"); !s.isInfraEnvToken(tok) || s.isInfraEnvToken(tok2) {
		t.Error("isInfraEnvToken tells an InfraEnv's token from a cluster's wrongly")
	}
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"infra_env_id":"another"}`)) + "." + parts[2]
	otherTok, err := other.token(infraEnvScope, testInfraEnvID)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{"altered claims": forged, "another key": otherTok, "not a JWT": "abc", "empty": ""} {
		if _, _, err := s.verifyToken(bad); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}
