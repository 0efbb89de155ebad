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
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/validation"
)

// The image registry ConfigMap that spec.config.imageRegistryRef names, read as upstream CAPOA
// reads it (controlplane/internal/imageregistry/image_registry.go, GenerateImageRegistryData):
// registries.conf (containers-registries.conf(5), version 2) says which registries are mirrored
// where, ca-bundle.crt (optional) the CA of the mirrors. The installed cluster gets them as
// manifests, which assisted-service applies at install (the AgentClusterInstall's
// manifestsConfigMapRefs): an ImageDigestMirrorSet (and an ImageTagMirrorSet for mirrors marked
// pull-from-mirror = "tag-only"), the CA in ConfigMap openshift-config/additional-registry-certificate
// and image.config.openshift.io/cluster trusting it and listing the insecure mirrors. The keys and
// object names are upstream's, so that a cluster switched from it gets the same objects.
const (
	registriesConfKey = "registries.conf"
	registryCAKey     = "ca-bundle.crt"

	idmsManifestKey        = "image-digest-mirror-set.json"
	itmsManifestKey        = "image-tag-mirror-set.json"
	registryCAManifestKey  = "additional-registry-certificate.json"
	imageConfigManifestKey = "image-config.json"

	mirrorSetName       = "additional-registry"
	registryCAConfigMap = "additional-registry-certificate"
	openshiftConfigNS   = "openshift-config"
	// registryCAConfigMapKey is where image.config.openshift.io's additionalTrustedCA reads the CA
	// of a registry: a key named after the registry host, or "ca-bundle.crt" for every one
	// (openshift/api config/v1 types_image.go, AdditionalTrustedCA).
	registryCAConfigMapKey = "ca-bundle.crt"
)

// registriesConf is the part of containers-registries.conf(5) read here.
type registriesConf struct {
	Registries []struct {
		Location string `toml:"location"`
		Mirrors  []struct {
			Location       string `toml:"location"`
			Insecure       bool   `toml:"insecure"`
			PullFromMirror string `toml:"pull-from-mirror"`
		} `toml:"mirror"`
	} `toml:"registry"`
}

// parseRegistriesConf parses the registries.conf of an image registry ConfigMap.
func parseRegistriesConf(conf string) (registriesConf, error) {
	var parsed registriesConf
	if err := toml.Unmarshal([]byte(conf), &parsed); err != nil {
		return registriesConf{}, fmt.Errorf("its %s is not valid TOML: %w", registriesConfKey, err)
	}
	return parsed, nil
}

// releaseMirrors are the mirrors of conf as the release reader uses them.
func (conf registriesConf) releaseMirrors() []release.MirrorRule {
	rules := make([]release.MirrorRule, 0, len(conf.Registries))
	for _, reg := range conf.Registries {
		rule := release.MirrorRule{Source: reg.Location}
		for _, m := range reg.Mirrors {
			rule.Mirrors = append(rule.Mirrors, release.Mirror{Location: m.Location, PullFromMirror: m.PullFromMirror})
		}
		rules = append(rules, rule)
	}
	return rules
}

// registryManifests returns the data of the manifests ConfigMap for the image registry ConfigMap
// cm, or why cm cannot be used (an error naming the key and what to fix).
func registryManifests(cm *corev1.ConfigMap) (map[string]string, error) {
	conf, ok := cm.Data[registriesConfKey]
	if !ok {
		return nil, fmt.Errorf("it has no %s key: put the mirrors there in containers-registries.conf format ([[registry]] location, [[registry.mirror]] location)", registriesConfKey)
	}
	parsed, err := parseRegistriesConf(conf)
	if err != nil {
		return nil, err
	}
	var digest []configv1.ImageDigestMirrors
	var tag []configv1.ImageTagMirrors
	var insecure []string
	for i, reg := range parsed.Registries {
		if reg.Location == "" {
			return nil, fmt.Errorf("registry %d of its %s has no location", i+1, registriesConfKey)
		}
		if len(reg.Mirrors) == 0 {
			return nil, fmt.Errorf("registry %s of its %s has no [[registry.mirror]]", reg.Location, registriesConfKey)
		}
		d := configv1.ImageDigestMirrors{Source: reg.Location}
		t := configv1.ImageTagMirrors{Source: reg.Location}
		for _, m := range reg.Mirrors {
			if m.Location == "" {
				return nil, fmt.Errorf("a mirror of registry %s in its %s has no location", reg.Location, registriesConfKey)
			}
			switch m.PullFromMirror {
			case "tag-only":
				t.Mirrors = append(t.Mirrors, configv1.ImageMirror(m.Location))
			case "", "all", "digest-only":
				d.Mirrors = append(d.Mirrors, configv1.ImageMirror(m.Location))
			default:
				return nil, fmt.Errorf("mirror %s of registry %s in its %s has pull-from-mirror %q: use all, digest-only or tag-only",
					m.Location, reg.Location, registriesConfKey, m.PullFromMirror)
			}
			if m.Insecure && !slices.Contains(insecure, m.Location) {
				insecure = append(insecure, m.Location)
			}
		}
		if len(d.Mirrors) > 0 {
			digest = append(digest, d)
		}
		if len(t.Mirrors) > 0 {
			tag = append(tag, t)
		}
	}
	if len(digest) == 0 && len(tag) == 0 {
		return nil, fmt.Errorf("its %s names no mirror", registriesConfKey)
	}
	data := map[string]string{}
	add := func(key string, obj any) error {
		b, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", key, err)
		}
		data[key] = string(b)
		return nil
	}
	typeMeta := func(kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: configv1.GroupVersion.String(), Kind: kind}
	}
	if len(digest) > 0 {
		if err := add(idmsManifestKey, configv1.ImageDigestMirrorSet{TypeMeta: typeMeta("ImageDigestMirrorSet"),
			ObjectMeta: metav1.ObjectMeta{Name: mirrorSetName}, Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: digest}}); err != nil {
			return nil, err
		}
	}
	if len(tag) > 0 {
		if err := add(itmsManifestKey, configv1.ImageTagMirrorSet{TypeMeta: typeMeta("ImageTagMirrorSet"),
			ObjectMeta: metav1.ObjectMeta{Name: mirrorSetName}, Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: tag}}); err != nil {
			return nil, err
		}
	}
	ca, hasCA := cm.Data[registryCAKey]
	if hasCA {
		if err := validation.CertificateBundle(field.NewPath("data", registryCAKey), ca); err != nil {
			return nil, fmt.Errorf("its %s: %s", registryCAKey, err.Detail)
		}
		if err := add(registryCAManifestKey, corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: openshiftConfigNS, Name: registryCAConfigMap},
			Data:       map[string]string{registryCAConfigMapKey: ca}}); err != nil {
			return nil, err
		}
	}
	if hasCA || len(insecure) > 0 {
		image := configv1.Image{TypeMeta: typeMeta("Image"), ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}
		if hasCA {
			image.Spec.AdditionalTrustedCA = configv1.ConfigMapNameReference{Name: registryCAConfigMap}
		}
		image.Spec.RegistrySources.InsecureRegistries = insecure
		if err := add(imageConfigManifestKey, image); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// assistedKeepsMirrors refuses a registries.conf with a mirror that assisted-service, reading it
// through spec.mirrorRegistryRef, would drop: it keeps mirrors without pull-from-mirror or with
// digest-only or tag-only, and ignores "all" (pkg/mirrorregistries/parser.go parseMirrorRegistries
// has no case for it), although containers-registries.conf(5) allows it. conf is valid
// (registryManifests checked it).
func assistedKeepsMirrors(conf string) error {
	parsed, err := parseRegistriesConf(conf)
	if err != nil {
		return err
	}
	for _, reg := range parsed.Registries {
		for _, m := range reg.Mirrors {
			if m.PullFromMirror == "all" {
				return fmt.Errorf("mirror %s of registry %s in its %s has pull-from-mirror \"all\", which the hub's assisted-service ignores: remove that line (pulling everything from the mirror is the default)",
					m.Location, reg.Location, registriesConfKey)
			}
		}
	}
	return nil
}

// registryManifestsName is the name of the manifests ConfigMap of a control plane, in its
// namespace. (Upstream names it additional-registry-config in every namespace, so two control
// planes of one namespace would overwrite each other's.)
func registryManifestsName(oacp *controlplanev1.OpenshiftAssistedControlPlane) string {
	return oacp.Name + "-additional-registry-config"
}

// mirrorRegistryRefField is the AgentClusterInstall field through which assisted-service takes a
// cluster's mirrors from a ConfigMap of registries.conf and ca-bundle.crt, the keys of the
// image registry ConfigMap (api/hiveextension/v1beta1 AgentClusterInstallSpec.MirrorRegistryRef,
// a MirrorRegistryConfigMapReference of name and namespace, from assisted-service's per-cluster
// mirror registry, docs/user-guide/cluster-mirror-registry.md; the InfraEnv has the same field for
// the discovery image). assisted-service then uses the mirrors during the installation too (the
// install-config's imageDigestSources and the hosts' registries.conf), which manifests cannot do.
var mirrorRegistryRefField = []string{"spec", "mirrorRegistryRef"}

// mirrorRegistryRef is the AgentClusterInstall field that names the ConfigMap name of namespace
// as the cluster's mirrors.
func mirrorRegistryRef(name, namespace string) newerField {
	return newerField{path: mirrorRegistryRefField, value: map[string]any{"name": name, "namespace": namespace}}
}

// agentClusterInstallCRD is the name of the AgentClusterInstall CRD.
const agentClusterInstallCRD = "agentclusterinstalls.extensions.hive.openshift.io"

// imageRegistry is how the control plane's image registry ConfigMap reaches the installation.
type imageRegistry struct {
	// manifests is the manifests ConfigMap for the AgentClusterInstall's manifestsConfigMapRefs:
	// on a hub whose AgentClusterInstall has no spec.mirrorRegistryRef.
	manifests *hiveextv1beta1.ManifestsConfigMapReference
	// fields holds spec.mirrorRegistryRef on a hub whose AgentClusterInstall has it: the
	// ConfigMap, or nil to remove a reference the spec no longer makes.
	fields []newerField
}

// reconcileImageRegistry checks the control plane's image registry ConfigMap and returns how it
// reaches the installation: where the hub's AgentClusterInstall CRD has spec.mirrorRegistryRef,
// through that field (assisted-service reads the ConfigMap itself); on older hubs, as manifests
// (a ConfigMap written here) that assisted-service applies to the installed cluster. The
// ConfigMap is read from the API server (the manager caches no ConfigMaps) at each reconcile
// until the install starts; one that is missing or cannot be used is a Problem on Available,
// retried, and the AgentClusterInstall is not written meanwhile, so nothing installs without its
// mirrors.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileImageRegistry(ctx context.Context, s *scope) (imageRegistry, error) {
	mirrorRef, err := r.schemas.Has(ctx, r.Client, r.APIReader, agentClusterInstallCRD, hiveextv1beta1.GroupVersion.Version, mirrorRegistryRefField...)
	if err != nil {
		return imageRegistry{}, err
	}
	ref := s.oacp.Spec.Config.ImageRegistryRef
	if ref == nil {
		if mirrorRef {
			return imageRegistry{fields: []newerField{{path: mirrorRegistryRefField}}}, nil
		}
		return imageRegistry{}, nil
	}
	src := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.oacp.Namespace, Name: ref.Name}, src); err != nil {
		if apierrors.IsNotFound(err) {
			return imageRegistry{}, reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.ImageRegistryInvalidReason,
				fmt.Errorf("ConfigMap %s, which spec.config.imageRegistryRef names, does not exist: create it (keys %s and, optionally, %s)",
					ref.Name, registriesConfKey, registryCAKey))
		}
		return imageRegistry{}, fmt.Errorf("getting the image registry ConfigMap %s: %w", ref.Name, err)
	}
	data, err := registryManifests(src)
	if err != nil {
		return imageRegistry{}, reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.ImageRegistryInvalidReason,
			fmt.Errorf("ConfigMap %s, which spec.config.imageRegistryRef names, cannot be used: %w", ref.Name, err))
	}
	if mirrorRef {
		if err := assistedKeepsMirrors(src.Data[registriesConfKey]); err != nil {
			return imageRegistry{}, reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.ImageRegistryInvalidReason,
				fmt.Errorf("ConfigMap %s, which spec.config.imageRegistryRef names, cannot be used: %w", ref.Name, err))
		}
		return imageRegistry{fields: []newerField{mirrorRegistryRef(ref.Name, s.oacp.Namespace)}}, nil
	}
	out := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.oacp.Namespace, Name: registryManifestsName(s.oacp)}}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, out, func() error {
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[clusterv1.ClusterNameLabel] = s.cluster.Name
		out.Data = data
		return controllerutil.SetControllerReference(s.oacp, out, r.Client.Scheme())
	}); err != nil {
		return imageRegistry{}, fmt.Errorf("writing the registry manifests ConfigMap %s: %w", out.Name, err)
	}
	return imageRegistry{manifests: &hiveextv1beta1.ManifestsConfigMapReference{Name: out.Name}}, nil
}
