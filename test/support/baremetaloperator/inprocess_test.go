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

package inprocess

import (
	"testing"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/metal3-io/baremetal-operator/pkg/provisioner"
	"github.com/metal3-io/baremetal-operator/pkg/provisioner/fixture"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func newManager(t *testing.T) ctrl.Manager {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := bmov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	// No API server is needed to set controllers up: the manager connects when it starts.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{Scheme: s,
		Metrics: metricsserver.Options{BindAddress: "0"}, Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// TestSetupBareMetalHost registers BMO's controllers with a manager, with any provisioner
// factory.
func TestSetupBareMetalHost(t *testing.T) {
	var f provisioner.Factory = &fixture.Fixture{}
	if err := SetupBareMetalHost(newManager(t), f, Options{Concurrency: 1, Log: logr.Discard()}); err != nil {
		t.Fatal(err)
	}
}

// TestSetupBareMetalHostNeedsTheMetal3Types: a manager whose scheme lacks BMO's API cannot run
// its controllers.
func TestSetupBareMetalHostNeedsTheMetal3Types(t *testing.T) {
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{Scheme: runtime.NewScheme(),
		Metrics: metricsserver.Options{BindAddress: "0"}, Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := SetupBareMetalHost(mgr, &fixture.Fixture{}, Options{Log: logr.Discard()}); err == nil {
		t.Fatal("set up without the metal3.io types in the scheme")
	}
}

// TestSetupWebhooks registers BMO's BareMetalHost webhook with a manager's webhook server.
func TestSetupWebhooks(t *testing.T) {
	if err := SetupWebhooks(newManager(t)); err != nil {
		t.Fatal(err)
	}
}
