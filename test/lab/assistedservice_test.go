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

package lab

import (
	"context"
	"strings"
	"testing"

	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
)

// TestServiceReleaseImages: every release of the lab's registry, as RELEASE_IMAGES lists it.
func TestServiceReleaseImages(t *testing.T) {
	reg, err := release.StartSecureRegistry(release.SecureOptions{Username: "u", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	l := &Lab{Releases: reg}
	if err := l.AddRelease("4.17.3", "1.30.4"); err != nil {
		t.Fatal(err)
	}
	imgs := l.serviceReleaseImages()
	if len(imgs) != len(Releases)+1 {
		t.Fatalf("%d release images, want one by tag for each of %d and one by digest", len(imgs), len(Releases))
	}
	digest, _ := l.versions.Load("4.17.3")
	for _, img := range imgs {
		if !strings.HasPrefix(img.Version, img.OpenshiftVersion+".") || img.CPUArchitecture != "x86_64" ||
			img.URL != reg.Repository()+":"+img.Version+"-x86_64" && img.URL != reg.Repository()+"@"+digest.(string) {
			t.Errorf("release image %+v", img)
		}
	}
}

// TestClusterDeploymentOf: the service's cluster is the ClusterDeployment of its name and base
// domain.
func TestClusterDeploymentOf(t *testing.T) {
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	cd := func(name, cluster, domain string) *hivev1.ClusterDeployment {
		return &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: hivev1.ClusterDeploymentSpec{ClusterName: cluster, BaseDomain: domain}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cd("a", "sno", "lab.example"), cd("b", "sno", "other.example")).Build()
	got, err := clusterDeploymentOf(context.Background(), c, &models.Cluster{Name: "sno", BaseDNSDomain: "other.example"})
	if err != nil || got.Name != "b" {
		t.Fatalf("clusterDeploymentOf = %v, %v; want b", got, err)
	}
	if _, err := clusterDeploymentOf(context.Background(), c, &models.Cluster{Name: "x", BaseDNSDomain: "lab.example"}); err == nil {
		t.Fatal("a cluster of no ClusterDeployment was found")
	}
}

// TestServiceSpeed: at Fast the service's monitors and its day-2 Node checks run every second;
// Realistic keeps its own intervals.
func TestServiceSpeed(t *testing.T) {
	fast := serviceSpeed(Fast)
	for _, v := range []string{"HOST_MONITOR_INTERVAL", "CLUSTER_MONITOR_INTERVAL", "APPROVE_CSRS_REQUEUE_DURATION"} {
		if fast[v] != "1s" {
			t.Errorf("Fast: %s=%q, want 1s", v, fast[v])
		}
	}
	if got := serviceSpeed(Realistic); got != nil {
		t.Errorf("Realistic: %v, want the service's own intervals", got)
	}
}
