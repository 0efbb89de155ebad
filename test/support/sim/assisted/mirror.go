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
	"context"
	"fmt"
	"time"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Per-cluster mirror registries, as assisted-service takes them from spec.mirrorRegistryRef of an
// AgentClusterInstall or an InfraEnv, a field of its CRDs from 2025 on (ACM 2.13) that the Go types
// this project pins lack (openshift/assisted-service internal/controller/controllers/mirrorregistry
// ProcessMirrorRegistryConfig, pkg/mirrorregistries/parser.go GetImageRegistries, and
// internal/controller/controllers/common.go ensureConfigMapIsLabelled).

// The labels assisted-service puts on a mirror registry ConfigMap it uses: for ACM's backup, and
// so that its controllers watch it (common.go BackupLabel, WatchResourceLabel).
const (
	BackupLabel        = "cluster.open-cluster-management.io/backup"
	WatchResourceLabel = "agent-install.openshift.io/watch"
)

// liveSpec reads the spec of obj (of kind gvk) as the API server stores it, with the fields the
// pinned Go types lack.
func (s *Simulator) liveSpec(ctx context.Context, obj client.Object, gvk schema.GroupVersionKind) (map[string]any, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := s.Client.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	return spec, nil
}

// mirrorRegistryRef is spec.mirrorRegistryRef of a live spec: nil when there is none (the hub's
// CRD lacks it, or it is unset).
func mirrorRegistryRef(spec map[string]any) *client.ObjectKey {
	ref, found, _ := unstructured.NestedStringMap(spec, "mirrorRegistryRef")
	if !found {
		return nil
	}
	return &client.ObjectKey{Namespace: ref["namespace"], Name: ref["name"]}
}

// checkMirrorRegistry reads the mirror registry ConfigMap at ref as assisted-service does: it must
// exist and have a registries.conf key whose [[registry]] tables name at least one mirror;
// ca-bundle.crt is optional. A ConfigMap it uses gets its backup and watch labels. The errors are
// assisted-service's, which reach the AgentClusterInstall's SpecSynced condition (an input error)
// or the InfraEnv's ImageCreated condition.
func (s *Simulator) checkMirrorRegistry(ctx context.Context, ref client.ObjectKey) error {
	cm := &corev1.ConfigMap{}
	if err := s.Client.Get(ctx, ref, cm); err != nil {
		return fmt.Errorf("Failed to get referenced ConfigMap: %w", err) //nolint:staticcheck // assisted-service's message
	}
	conf, ok := cm.Data["registries.conf"]
	if !ok {
		return fmt.Errorf("ConfigMap %s/%s does not contain registries.conf key", ref.Namespace, ref.Name)
	}
	if conf == "" && cm.Data["ca-bundle.crt"] == "" {
		return nil
	}
	var parsed struct {
		Registry []struct {
			Location string `toml:"location"`
			Mirror   []struct {
				Location       string `toml:"location"`
				PullFromMirror string `toml:"pull-from-mirror"`
			} `toml:"mirror"`
		} `toml:"registry"`
	}
	if err := toml.Unmarshal([]byte(conf), &parsed); err != nil {
		return fmt.Errorf("failed to load value of registries.conf into toml tree; incorrectly formatted toml: %w", err)
	}
	mirrors := 0
	for _, r := range parsed.Registry {
		for _, mirror := range r.Mirror {
			// Only tag-only, digest-only and no pull-from-mirror are kept (parseMirrorRegistries
			// has no case for "all").
			switch mirror.PullFromMirror {
			case "", "digest-only", "tag-only":
				if r.Location != "" && mirror.Location != "" {
					mirrors++
				}
			}
		}
	}
	if mirrors == 0 {
		return fmt.Errorf("failed to find any image mirrors in registry.conf")
	}
	if cm.Labels[BackupLabel] != "true" || cm.Labels[WatchResourceLabel] != "true" {
		before := cm.DeepCopy()
		metav1.SetMetaDataLabel(&cm.ObjectMeta, BackupLabel, "true")
		metav1.SetMetaDataLabel(&cm.ObjectMeta, WatchResourceLabel, "true")
		if err := s.Client.Patch(ctx, cm, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("failed to set label %s:%s for configmap %s/%s: %w", BackupLabel, "true", ref.Namespace, ref.Name, err)
		}
	}
	return nil
}

// The InfraEnv condition of an InfraEnv whose ClusterDeployment, or cluster, does not exist yet
// (api/v1beta1 infraenv_types.go from 2025; the pinned types lack them).
const (
	MissingClusterDeploymentReason    = "MissingClusterDeployment"
	MissingClusterDeploymentReference = "ClusterDeployment is missing"
)

// requeueImage is how soon an InfraEnv whose image cannot be created yet is looked at again
// (assisted-service's defaultRequeueAfterPerRecoverableError is 10 s; the lab's clock is faster).
const requeueImage = time.Second

// imageCanBeCreated tells whether assisted-service would create the discovery image of ie now, and
// if not, says why on its ImageCreated condition, as assisted-service's InfraEnv controller does
// (internal/controller/controllers/infraenv_controller.go):
//   - an InfraEnv bound to a cluster (spec.clusterRef) waits for the cluster: its
//     ClusterDeployment, and the cluster that its AgentClusterInstall registers
//     (getClusterFromDB: "cluster does not exist: <name>, check AgentClusterInstall conditions:
//     ..."; ImageCreated Unknown, MissingClusterDeployment);
//   - its spec.mirrorRegistryRef, on a hub whose CRD has it, must name a usable ConfigMap
//     (processMirrorRegistryConfig; ImageCreated False, ImageCreationError, "Failed to create
//     image due to an internal error: ...").
func (s *Simulator) imageCanBeCreated(ctx context.Context, ie *aiv1beta1.InfraEnv) (bool, error) {
	why, status, reason := "", corev1.ConditionUnknown, MissingClusterDeploymentReason
	if ref := ie.Spec.ClusterRef; ref != nil {
		cd := &hivev1.ClusterDeployment{}
		err := s.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cd)
		switch {
		case apierrors.IsNotFound(err):
			why = fmt.Sprintf("%s: failed to get clusterDeployment with name %s in namespace %s: %v", MissingClusterDeploymentReference, ref.Name, ref.Namespace, err)
		case err != nil:
			return false, err
		default:
			registered, err := s.clusterRegistered(ctx, cd)
			if err != nil {
				return false, err
			}
			if !registered {
				detail := "AgentClusterInstall is not defined in ClusterDeployment"
				if cd.Spec.ClusterInstallRef != nil {
					detail = fmt.Sprintf("check AgentClusterInstall conditions: name %s in namespace %s", cd.Spec.ClusterInstallRef.Name, cd.Namespace)
				}
				why = fmt.Sprintf("%s: cluster does not exist: %s, %s", MissingClusterDeploymentReference, cd.Name, detail)
			}
		}
	}
	if why == "" {
		spec, err := s.liveSpec(ctx, ie, aiv1beta1.GroupVersion.WithKind("InfraEnv"))
		if err != nil {
			return false, err
		}
		if ref := mirrorRegistryRef(spec); ref != nil {
			if err := s.checkMirrorRegistry(ctx, *ref); err != nil {
				why, status, reason = aiv1beta1.ImageStateFailedToCreate+" due to an internal error: "+err.Error(), corev1.ConditionFalse, aiv1beta1.ImageCreationErrorReason
			}
		}
	}
	if why == "" {
		return true, nil
	}
	before := ie.DeepCopy()
	conditionsv1.SetStatusConditionNoHeartbeat(&ie.Status.Conditions, conditionsv1.Condition{
		Type: aiv1beta1.ImageCreatedCondition, Status: status, Reason: reason, Message: why,
	})
	if err := s.Client.Status().Patch(ctx, ie, client.MergeFrom(before)); err != nil {
		return false, fmt.Errorf("updating InfraEnv status: %w", err)
	}
	return false, nil
}

// clusterRegistered tells whether the AgentClusterInstall of cd has registered its cluster: it
// exists and the simulator has taken it past its input checks (it has a state).
func (s *Simulator) clusterRegistered(ctx context.Context, cd *hivev1.ClusterDeployment) (bool, error) {
	ref := cd.Spec.ClusterInstallRef
	if ref == nil || ref.Kind != "AgentClusterInstall" {
		return false, nil
	}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: cd.Namespace, Name: ref.Name}, aci); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return aci.Status.DebugInfo.State != "", nil
}
