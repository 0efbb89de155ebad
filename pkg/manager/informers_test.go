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

package manager_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// recordingInformers records the informers asked for and whether the caller would block on them.
type recordingInformers struct {
	cache.Informers
	asked   []string
	blocked []bool
	fail    string
}

func (r *recordingInformers) GetInformer(_ context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	o := &cache.InformerGetOptions{}
	for _, opt := range opts {
		opt(o)
	}
	kind := strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1.")
	r.asked = append(r.asked, kind)
	r.blocked = append(r.blocked, o.BlockUntilSynced == nil || *o.BlockUntilSynced)
	if kind == r.fail {
		return nil, errors.New("no such kind")
	}
	return nil, nil
}

// TestPrestartInformers: each kind's informer is registered without waiting for it to sync (the
// cache has not started), and a kind the cache cannot hold is an error that names it.
func TestPrestartInformers(t *testing.T) {
	r := &recordingInformers{}
	if err := manager.PrestartInformers(t.Context(), r, &corev1.Secret{}, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.asked, ",") != "Secret,ConfigMap" {
		t.Errorf("informers registered: %v", r.asked)
	}
	for i, b := range r.blocked {
		if b {
			t.Errorf("the informer of %s was asked for blocking until synced, before the cache starts", r.asked[i])
		}
	}
	r = &recordingInformers{fail: "Secret"}
	err := manager.PrestartInformers(t.Context(), r, &corev1.Secret{}, &corev1.ConfigMap{})
	if err == nil || !strings.Contains(err.Error(), "Secret") || len(r.asked) != 1 {
		t.Errorf("a kind the cache cannot hold: %v (asked %v)", err, r.asked)
	}
}
