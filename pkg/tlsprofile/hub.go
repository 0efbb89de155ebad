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

package tlsprofile

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// FlagHelp ends the help of the --tls-min-version and --tls-cipher-suites flags of a manager that
// follows the hub's profile.
const FlagHelp = "On an OpenShift hub, when this flag is not given, the TLS security profile of the APIServer " +
	"\"cluster\" (spec.tlsSecurityProfile) sets it, and the manager restarts when the profile changes; " +
	"given, the flag wins over the profile."

// Hub is the TLS security profile an OpenShift hub had when the manager started.
type Hub struct {
	// Profile is APIServer "cluster"'s spec.tlsSecurityProfile (nil: Intermediate).
	Profile *configv1.TLSSecurityProfile
	// Settings are the profile's, with what the user set by flag left to the flags.
	Settings Settings
	// Explicit are the settings the user gave by flag.
	Explicit Explicit

	cfg *rest.Config
	log logr.Logger
}

// Observe reads the hub's TLS security profile for a manager whose TLS flags explicit says were
// given. It returns nil, and the manager serves as its flags say, where the API server does not
// serve config.openshift.io/v1 APIServer (found by discovery: plain Kubernetes), where both flags
// were given (the profile could change nothing), or where the manager may not read APIServers
// (logged, with the grant that is missing).
func Observe(ctx context.Context, cfg *rest.Config, explicit Explicit) (*Hub, error) {
	log := ctrl.LoggerFrom(ctx).WithName("tlsprofile")
	if explicit.MinVersion && explicit.CipherSuites {
		log.Info("--tls-min-version and --tls-cipher-suites are given: the hub's TLS security profile is not followed")
		return nil, nil
	}
	served, err := Served(cfg)
	if err != nil || !served {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("creating a client for APIServer %s: %w", APIServerName, err)
	}
	h := &Hub{Explicit: explicit, cfg: cfg, log: log}
	apiServer := &configv1.APIServer{}
	switch err := c.Get(ctx, client.ObjectKey{Name: APIServerName}, apiServer); {
	case apierrors.IsForbidden(err):
		log.Error(err, "Cannot read the hub's TLS security profile: serving with the --tls-* flags. "+
			"Grant the manager's ClusterRole get, list and watch on apiservers.config.openshift.io to follow it")
		return nil, nil
	case apierrors.IsNotFound(err):
		// No APIServer "cluster" yet: OpenShift's default, Intermediate; the watcher restarts
		// the manager if one appears with another profile.
	case err != nil:
		return nil, fmt.Errorf("reading the TLS security profile of APIServer %s: %w", APIServerName, err)
	default:
		h.Profile = apiServer.Spec.TLSSecurityProfile
	}
	h.Settings = h.settingsOf(h.Profile)
	if len(h.Settings.Unsupported) > 0 {
		// Logged once, here: the watcher only compares the settings Go can use.
		log.Info("Skipping the cipher suites of the hub's TLS security profile that Go does not implement",
			"profile", Name(h.Profile), "ciphers", h.Settings.Unsupported)
	}
	minVersion, suites := "--tls-min-version", "--tls-cipher-suites"
	if !explicit.MinVersion {
		minVersion = tls.VersionName(h.Settings.MinVersion)
	}
	if !explicit.CipherSuites {
		suites = fmt.Sprintf("%d of the profile's", len(h.Settings.CipherSuites))
	}
	log.Info("Serving webhooks and metrics with the hub's TLS security profile", "profile", Name(h.Profile),
		"minTLSVersion", minVersion, "cipherSuites", suites)
	return h, nil
}

// Served tells, by discovery, whether the API server serves config.openshift.io/v1 apiservers.
func Served(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, fmt.Errorf("creating a discovery client: %w", err)
	}
	resources, err := dc.ServerResourcesForGroupVersion(configv1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", configv1.GroupVersion, err)
	}
	return slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == "apiservers" }), nil
}

// Scheme holds the config.openshift.io/v1 types.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(configv1.Install(s))
	return s
}

// Option returns the TLSOpts function of the webhook and metrics servers; nil for a nil hub.
func (h *Hub) Option() func(*tls.Config) {
	if h == nil {
		return nil
	}
	return h.Settings.Option(h.Explicit)
}

// settingsOf returns the settings of a profile with the flags' settings left out, so that two
// profiles that differ only in what the flags set compare equal. A profile that cannot be used (a
// Custom one without settings, an unknown version) is Intermediate's, as
// controller-runtime-common's ResolveTLSConfig falls back to it, and is logged.
func (h *Hub) settingsOf(p *configv1.TLSSecurityProfile) Settings {
	spec, err := Spec(p)
	var s Settings
	if err == nil {
		s, err = SettingsFor(spec)
	}
	if err != nil {
		h.log.Error(err, "The hub's TLS security profile cannot be used: serving with Intermediate", "profile", Name(p))
		s, _ = SettingsFor(*configv1.TLSProfiles[configv1.TLSProfileIntermediateType])
	}
	if h.Explicit.MinVersion {
		s.MinVersion = 0
	}
	if h.Explicit.CipherSuites {
		s.CipherSuites = nil
	}
	return s
}

// Watcher returns a runnable that calls stop, once, when APIServer "cluster"'s profile comes to
// differ from the one the manager started with in what it sets (the flags' settings aside), as
// controller-runtime-common's SecurityProfileWatcher does: stop cancels the manager's context, the
// manager ends cleanly and its Deployment starts it again, with the new profile. It runs on every
// replica, leader or not: each serves webhooks and metrics. It watches through a cache of its own,
// of that one object, so that the provider's scheme and cache are left as they are.
func (h *Hub) Watcher(stop func()) (manager.Runnable, error) {
	c, err := cache.New(h.cfg, cache.Options{
		Scheme: Scheme(),
		ByObject: map[client.Object]cache.ByObject{
			&configv1.APIServer{}: {Field: fields.OneTermEqualSelector("metadata.name", APIServerName)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cache of APIServer %s: %w", APIServerName, err)
	}
	return &watcher{hub: h, cache: c, stop: stop}, nil
}

type watcher struct {
	hub   *Hub
	cache cache.Cache
	stop  func()
	once  sync.Once
}

var _ manager.LeaderElectionRunnable = &watcher{}

// NeedLeaderElection is false: every replica serves with the profile.
func (w *watcher) NeedLeaderElection() bool { return false }

// Start watches APIServer "cluster" until ctx is done.
func (w *watcher) Start(ctx context.Context) error {
	informer, err := w.cache.GetInformer(ctx, &configv1.APIServer{})
	if err != nil {
		return fmt.Errorf("watching APIServer %s: %w", APIServerName, err)
	}
	if _, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    w.seen,
		UpdateFunc: func(_, obj any) { w.seen(obj) },
		DeleteFunc: func(any) { w.changed(nil) },
	}); err != nil {
		return fmt.Errorf("watching APIServer %s: %w", APIServerName, err)
	}
	return w.cache.Start(ctx)
}

func (w *watcher) seen(obj any) {
	if apiServer, ok := obj.(*configv1.APIServer); ok {
		w.changed(apiServer.Spec.TLSSecurityProfile)
	}
}

// changed stops the manager when profile p sets other settings than the one it started with.
func (w *watcher) changed(p *configv1.TLSSecurityProfile) {
	if Changed(w.hub.Settings, w.hub.settingsOf(p)) {
		w.once.Do(func() {
			w.hub.log.Info("The hub's TLS security profile changed: stopping the manager so that it restarts with it",
				"from", Name(w.hub.Profile), "to", Name(p))
			w.stop()
		})
	}
}

// Changed tells whether a server configured with settings a would be configured otherwise with b.
func Changed(a, b Settings) bool {
	return a.MinVersion != b.MinVersion || !slices.Equal(a.CipherSuites, b.CipherSuites)
}
