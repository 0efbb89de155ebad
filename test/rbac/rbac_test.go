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

package rbac_test

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	bootstrapsetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/setup"
	controlplanesetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/setup"
	infrasetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
)

const (
	// own stands, in the tables, for the manager's own namespace (where its Deployment runs).
	own = "<own namespace>"
	// tenant is a namespace of clusters: any namespace but the managers'.
	tenant = "clusters"
	// all is every namespace (a list or watch of the cache's informers), or a cluster-scoped resource.
	all = ""
)

// Groups, as RBAC names them.
const (
	core         = ""
	capi         = "cluster.x-k8s.io"
	agentInfra   = "capi-provider.agent-install.openshift.io"
	assisted     = "agent-install.openshift.io"
	hiveExt      = "extensions.hive.openshift.io"
	hive         = "hive.openshift.io"
	bootstrapGrp = "bootstrap.cluster.x-k8s.io"
	cpGrp        = "controlplane.cluster.x-k8s.io"
	infraGrp     = "infrastructure.cluster.x-k8s.io"
	metal3       = "metal3.io"
	coordination = "coordination.k8s.io"
)

// row is one line of a manager's privilege table: whether the manager may (allow) do verb on
// resource ("name" or "name/subresource") of group in ns (own, tenant, another namespace, or all),
// optionally on one object name, and why.
type row struct {
	allow                     bool
	verbs                     []string
	group, resource, ns, name string
	why                       string
}

func can(why, verbs, group, resource, ns string) row {
	return row{allow: true, verbs: strings.Split(verbs, ","), group: group, resource: resource, ns: ns, why: why}
}

func cannot(why, verbs, group, resource, ns string) row {
	return row{verbs: strings.Split(verbs, ","), group: group, resource: resource, ns: ns, why: why}
}

func (r row) named(name string) row { r.name = name; return r }

// managerTable describes one manager: its provider folder and the rows of its privileges.
type managerTable struct {
	dir   string
	lease string
	rows  []row
}

var managers = []managerTable{
	{dir: "infrastructure", lease: infrasetup.LeaderElectionID, rows: infrastructureRows},
	{dir: "bootstrap", lease: bootstrapsetup.LeaderElectionID, rows: bootstrapRows},
	{dir: "controlplane", lease: controlplanesetup.LeaderElectionID, rows: controlPlaneRows},
}

// commonRows are every manager's: leader election in its own namespace only, events, metrics.
func commonRows(lease string) []row {
	const leaseWhy = "leader election has one Lease, in the manager's own namespace (a Role, no ClusterRole)"
	rows := []row{
		can("client-go's Lease lock creates the Lease (create cannot be limited to a name)", "create", coordination, "leases", own),
		can("client-go's Lease lock reads and renews its own Lease", "get,update", coordination, "leases", own).named(lease),
		cannot("the Lease lock never lists, watches, patches or deletes", "list,watch,patch,delete", coordination, "leases", own),
		cannot("a manager touches no other Lease, even in its namespace (another provider's there)", "get,update", coordination, "leases", own).named("other-leader-election"),
		can("client-go's leader election records core/v1 Events about its Lease", "create,patch", core, "events", own),
		cannot("the controllers record events.k8s.io Events; core Events only in the manager's namespace", "create,patch", core, "events", tenant),
		can("the controllers record events.k8s.io Events on the objects they reconcile", "create,patch", "events.k8s.io", "events", tenant),
		can("authenticated metrics (TokenReview)", "create", "authentication.k8s.io", "tokenreviews", all),
		can("authorized metrics (SubjectAccessReview)", "create", "authorization.k8s.io", "subjectaccessreviews", all),
		cannot("no RBAC writes: a manager cannot grant itself more", "create,update,patch", "rbac.authorization.k8s.io", "rolebindings", tenant),
		cannot("no RBAC writes: a manager cannot grant itself more", "create,update,patch", "rbac.authorization.k8s.io", "clusterrolebindings", all),
		cannot("a manager mints no ServiceAccount tokens", "create", core, "serviceaccounts/token", tenant),
		can("on an OpenShift hub, serves with APIServer cluster's TLS security profile and watches it (pkg/tlsprofile)",
			"get,list,watch", "config.openshift.io", "apiservers", all),
		cannot("reads the hub's TLS security profile only", "create,update,patch,delete", "config.openshift.io", "apiservers", all),
	}
	for _, ns := range []string{"kube-system", "kube-node-lease", "default", tenant} {
		rows = append(rows,
			cannot(leaseWhy, "create,patch,delete,list", coordination, "leases", ns),
			cannot(leaseWhy, "get,update", coordination, "leases", ns).named(lease),
			cannot(leaseWhy+" (a node's heartbeat, kube-system's controllers)", "update", coordination, "leases", ns).named("kube-controller-manager"),
		)
	}
	return rows
}

const (
	cached    = "read through the cache: its informer lists and watches in every namespace"
	patchOnly = "written with patches (patch helper, CreateOrPatch, merge patches), never a full update"
	status    = "status and conditions are patched by Cluster API's patch helper"
	finalizer = "sets owner references with blockOwnerDeletion to it (OwnerReferencesPermissionEnforcement asks update on finalizers)"
	// clusterSecrets: the infrastructure manager binds hosts in bursts, the bootstrap and
	// control-plane managers are reconciled tens of times per install (issue 19).
	clusterSecrets = "its informer of the Secrets labelled cluster.x-k8s.io/cluster-name (bootstrap data, kubeconfigs), as Cluster API's " +
		"own managers cache them; RBAC cannot restrict a list or watch to a label, so the grant is of every Secret"
)

var infrastructureRows = []row{
	can(cached, "get,list,watch", agentInfra, "agentmachines", all),
	can("finalizer, claim and release are patches", "patch", agentInfra, "agentmachines", tenant),
	can("status and conditions are patched (reconciler.Patcher: one merge patch per reconcile)", "patch", agentInfra, "agentmachines/status", tenant),
	can("the ignition token Secret is owned by its AgentMachine; "+finalizer, "update", agentInfra, "agentmachines/finalizers", tenant),
	can(cached, "get,list,watch", agentInfra, "agentclusters", all),
	can("finalizer and ClusterDeployment reference are patches", "patch", agentInfra, "agentclusters", tenant),
	can(status, "patch", agentInfra, "agentclusters/status", tenant),
	can("the ClusterDeployment and AgentClusterInstall it creates are owned by the AgentCluster; "+finalizer, "update", agentInfra, "agentclusters/finalizers", tenant),
	cannot(patchOnly, "update", agentInfra, "agentmachines", tenant),
	cannot(patchOnly, "update", agentInfra, "agentclusters", tenant),
	cannot("status and conditions are patched, never updated", "update", agentInfra, "agentmachines/status", tenant),
	cannot("Cluster API creates and deletes AgentMachines (from templates)", "create,delete", agentInfra, "agentmachines", tenant),
	can(cached, "get,list,watch", assisted, "agents", all),
	can("claims, binds and releases Agents with resourceVersion-locked merge patches", "patch", assisted, "agents", tenant),
	cannot("a full update would erase the fields of a newer Agent CRD; "+patchOnly, "update", assisted, "agents", tenant),
	cannot("Agents are assisted-service's: never created or deleted here", "create,delete", assisted, "agents", tenant),
	can(cached, "get,list,watch", capi, "clusters", all),
	can(cached, "get,list,watch", capi, "machines", all),
	can("the pre-terminate hook on a Machine is a merge patch", "patch", capi, "machines", tenant),
	cannot(patchOnly, "update", capi, "machines", tenant),
	cannot("Machines are Cluster API's", "create,delete", capi, "machines", tenant),
	can(cached+" (Watches)", "get,list,watch", hive, "clusterdeployments", all),
	can("an AgentCluster of a non-OpenshiftAssisted control plane creates and deletes its ClusterDeployment, "+
		"and removes Hive's finalizers when Hive is shown to be gone (package foreign)", "create,patch,delete", hive, "clusterdeployments", tenant),
	cannot(patchOnly, "update", hive, "clusterdeployments", tenant),
	can(cached, "get,list,watch", hiveExt, "agentclusterinstalls", all),
	can("creates, patches (ignition endpoint; finalizers of a stuck one) and deletes the AgentClusterInstall it owns", "create,patch,delete", hiveExt, "agentclusterinstalls", tenant),
	cannot(patchOnly, "update", hiveExt, "agentclusterinstalls", tenant),
	can("bootstrap data Secret of a Machine, workload kubeconfig (ClusterCache), the ignition token Secret", "get", core, "secrets", tenant),
	can("writes the ignition token Secret its AgentMachine owns (creates it; patches the token and owner of an existing one)", "create,patch", core, "secrets", tenant),
	can(clusterSecrets, "list,watch", core, "secrets", all),
	can(clusterSecrets, "list,watch", core, "secrets", tenant),
	cannot("the ignition token Secret is garbage-collected with its AgentMachine; "+patchOnly, "delete,update", core, "secrets", tenant),
	cannot("the bootstrap provider's own objects", "get,list,watch", infraGrp, "metal3machines", all),
	can("a deletion reads whether the CRD of a ClusterDeployment or AgentClusterInstall it waits for is uninstalled (uncached)",
		"get", "apiextensions.k8s.io", "customresourcedefinitions", all),
	cannot("reads one CRD at a time, never caches them", "list,watch,create,patch,update,delete", "apiextensions.k8s.io", "customresourcedefinitions", all),
	can("a HyperShift Cluster's HostedControlPlane, read once (APIReader) for its hosted cluster's ClusterDeployment",
		"get", "hypershift.openshift.io", "hostedcontrolplanes", all),
	cannot("reads HostedControlPlanes only, never caches them", "list,watch,create,patch,update,delete", "hypershift.openshift.io", "hostedcontrolplanes", all),
}

var bootstrapRows = []row{
	can(cached, "get,list,watch", bootstrapGrp, "openshiftassistedconfigs", all),
	can("finalizer and status through the patch helper", "patch", bootstrapGrp, "openshiftassistedconfigs", tenant),
	can(status, "patch", bootstrapGrp, "openshiftassistedconfigs/status", tenant),
	can("the InfraEnv and data Secret are owned by their config; "+finalizer, "update", bootstrapGrp, "openshiftassistedconfigs/finalizers", tenant),
	cannot(patchOnly, "update", bootstrapGrp, "openshiftassistedconfigs", tenant),
	cannot("the control plane and Cluster API create and delete configs", "create,delete", bootstrapGrp, "openshiftassistedconfigs", tenant),
	can(cached, "get,list,watch", capi, "clusters", all),
	can(cached, "get,list,watch", capi, "machines", all),
	cannot("never writes a Cluster or a Machine", "patch,update,create,delete", capi, "machines", tenant),
	can(cached, "get,list,watch", hive, "clusterdeployments", all),
	can(cached, "get,list,watch", hiveExt, "agentclusterinstalls", all),
	cannot("reads ClusterDeployments and AgentClusterInstalls only", "create,patch,update,delete", hive, "clusterdeployments", tenant),
	cannot("reads ClusterDeployments and AgentClusterInstalls only", "create,patch,update,delete", hiveExt, "agentclusterinstalls", tenant),
	can(cached+" (Owns)", "get,list,watch", assisted, "infraenvs", all),
	can("one InfraEnv per config: CreateOrPatch, deleted with the config", "create,patch,delete", assisted, "infraenvs", tenant),
	cannot(patchOnly, "update", assisted, "infraenvs", tenant),
	can(cached, "get,list,watch", assisted, "agents", all),
	can("approves, labels and releases Agents with merge patches", "patch", assisted, "agents", tenant),
	cannot(patchOnly, "update", assisted, "agents", tenant),
	can(cached, "get,list,watch", infraGrp, "metal3machines", all),
	can("hands the discovery ISO URL to the Metal3Machine with a merge patch", "patch", infraGrp, "metal3machines", tenant),
	cannot(patchOnly, "update", infraGrp, "metal3machines", tenant),
	can(cached, "get,list,watch", metal3, "baremetalhosts", all),
	cannot("reads BareMetalHosts only", "patch,update", metal3, "baremetalhosts", tenant),
	can("CreateOrPatch of its own bootstrap data Secret reads it", "get", core, "secrets", tenant),
	can("CreateOrPatch of its own bootstrap data Secret", "create,patch", core, "secrets", tenant),
	can(clusterSecrets+": the bootstrap data Secrets it wrote are looked at there before they are read again", "list,watch", core, "secrets", all),
	cannot("the data Secret is garbage-collected with its config; "+patchOnly, "update,delete", core, "secrets", tenant),
	can("the image-based flow's CA bundle of assisted-service, when kept in a ConfigMap (--assisted-ca-bundle-resource=configmap), read uncached", "get", core, "configmaps", tenant),
	cannot("reads that CA bundle only", "list,watch,create,patch,update,delete", core, "configmaps", tenant),
}

var controlPlaneRows = []row{
	can(cached, "get,list,watch", cpGrp, "openshiftassistedcontrolplanes", all),
	can("finalizer, annotations and status through the patch helper", "patch", cpGrp, "openshiftassistedcontrolplanes", tenant),
	can(status, "patch", cpGrp, "openshiftassistedcontrolplanes/status", tenant),
	can("Machines, configs, clones, ClusterDeployment, AgentClusterInstall and kubeconfig are owned by the control plane; "+finalizer,
		"update", cpGrp, "openshiftassistedcontrolplanes/finalizers", tenant),
	cannot(patchOnly, "update", cpGrp, "openshiftassistedcontrolplanes", tenant),
	can(cached, "get,list,watch", capi, "clusters", all),
	cannot("never writes the Cluster (nor its status)", "patch,update", capi, "clusters", tenant),
	cannot("never reads the Cluster's status subresource apart", "get,patch,update", capi, "clusters/status", tenant),
	can(cached+" (the day-1 worker count)", "get,list,watch", capi, "machinedeployments", all),
	cannot("reads MachineDeployments only", "patch,update,create,delete", capi, "machinedeployments", tenant),
	can(cached+" (Owns)", "get,list,watch", capi, "machines", all),
	can("creates, patches (etcd hook, UpToDate, remediation) and deletes control-plane Machines", "create,patch,delete", capi, "machines", tenant),
	can(status+" (UpToDate, OwnerRemediated)", "patch", capi, "machines/status", tenant),
	cannot(patchOnly, "update", capi, "machines", tenant),
	cannot(patchOnly, "update", capi, "machines/status", tenant),
	can(cached, "get,list,watch", bootstrapGrp, "openshiftassistedconfigs", all),
	can("creates a config per Machine, deletes leftovers", "create,delete", bootstrapGrp, "openshiftassistedconfigs", tenant),
	can("the machine template's labels and annotations, changed in place (inplace_machines.go)", "patch", bootstrapGrp, "openshiftassistedconfigs", tenant),
	cannot(patchOnly, "update", bootstrapGrp, "openshiftassistedconfigs", tenant),
	can(cached+" (the CPU architectures of the worker pools choose the release)", "get,list,watch", bootstrapGrp, "openshiftassistedconfigtemplates", all),
	cannot("reads the worker templates only", "create,patch,update,delete", bootstrapGrp, "openshiftassistedconfigtemplates", tenant),
	can("a Metal3MachineTemplate, read as unstructured: read, owned by the Cluster (patch); its metadata cached (watch)", "get,list,watch,patch", infraGrp, "metal3machinetemplates", tenant),
	can("Metal3Machines cloned from it, leftovers listed and deleted; their metadata cached (watch)", "get,list,watch,create,patch,delete", infraGrp, "metal3machines", tenant),
	cannot("the rest of the infrastructure group, which holds other providers' identity kinds: another provider's machine kinds are granted "+
		"by the hub's administrator (docs/security.md)", "get,list,watch,create,patch,delete", infraGrp, "*", all),
	cannot("another provider's identities", "get,list,create,patch,delete", infraGrp, "awsclustercontrolleridentities", all),
	cannot(patchOnly, "update", infraGrp, "metal3machines", tenant),
	can("the same for AgentMachineTemplates and AgentMachines", "get,list,watch,create,patch,delete", agentInfra, "agentmachinetemplates", tenant),
	can("the same for AgentMachineTemplates and AgentMachines", "get,list,watch,create,patch,delete", agentInfra, "agentmachines", tenant),
	cannot(patchOnly, "update", agentInfra, "agentmachines", tenant),
	can(cached+" (Owns)", "get,list,watch", hiveExt, "agentclusterinstalls", all),
	can("CreateOrPatch of the AgentClusterInstall it owns, finalizers of a stuck one, deletion", "create,patch,delete", hiveExt, "agentclusterinstalls", tenant),
	can(cached+" (Owns)", "get,list,watch", hive, "clusterdeployments", all),
	can("CreateOrPatch of the ClusterDeployment it owns, finalizers of a stuck one, deletion", "create,patch,delete", hive, "clusterdeployments", tenant),
	can(cached+" (CreateOrPatch reads it)", "get,list,watch", hive, "clusterimagesets", all),
	can("CreateOrPatch of the control plane's ClusterImageSet (cluster-scoped), deletion", "create,patch,delete", hive, "clusterimagesets", all),
	cannot(patchOnly, "update", hiveExt, "agentclusterinstalls", tenant),
	cannot(patchOnly, "update", hive, "clusterdeployments", tenant),
	cannot(patchOnly, "update", hive, "clusterimagesets", all),
	can("Cluster API's contract lookup reads the CRDs' metadata (cached)", "get,list,watch", "apiextensions.k8s.io", "customresourcedefinitions", all),
	cannot("reads CRDs only", "create,patch,update,delete", "apiextensions.k8s.io", "customresourcedefinitions", all),
	can("the admin kubeconfig assisted-service wrote; a <cluster>-kubeconfig not (yet) in its cache (APIReader)", "get", core, "secrets", tenant),
	can("writes (creates, or adopts an empty one: patch) and deletes the <cluster>-kubeconfig Secret it owns, in the Cluster's namespace",
		"create,patch,delete", core, "secrets", tenant),
	can(clusterSecrets+": the <cluster>-kubeconfig it wrote, and every kubeconfig the ClusterCache connects with", "list,watch", core, "secrets", all),
	can(clusterSecrets, "list,watch", core, "secrets", tenant),
	cannot(patchOnly, "update", core, "secrets", tenant),
	can("the image registry ConfigMap of spec.config.imageRegistryRef, read uncached; CreateOrPatch of the registry manifests ConfigMap it owns",
		"get,create,patch", core, "configmaps", tenant),
	cannot("the manifests ConfigMap is garbage-collected with the control plane; "+patchOnly, "list,watch,update,delete", core, "configmaps", tenant),
}

// installed is a manager as its components install it.
type installed struct {
	managerTable
	namespace, serviceAccount string
}

func (m installed) user() string {
	return "system:serviceaccount:" + m.namespace + ":" + m.serviceAccount
}

func (m installed) ns(ns string) string {
	if ns == own {
		return m.namespace
	}
	return ns
}

// install finds the manager's namespace and ServiceAccount in its components (the Deployment's).
func install(t *testing.T, m managerTable) installed {
	t.Helper()
	for _, o := range components[m.dir] {
		if o.GetKind() != "Deployment" {
			continue
		}
		sa, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
		if sa == "" {
			t.Fatalf("the Deployment of %s/config/default names no ServiceAccount", m.dir)
		}
		return installed{managerTable: m, namespace: o.GetNamespace(), serviceAccount: sa}
	}
	t.Fatalf("%s/config/default has no Deployment", m.dir)
	return installed{}
}

// TestManagersMayDoOnlyWhatTheyNeed asks the API server, for every row of every manager's table,
// whether the manager's ServiceAccount may do it (a SubjectAccessReview, as `kubectl auth can-i
// --as=system:serviceaccount:<namespace>:<name>`), and fails on any answer the table does not
// expect: a needed verb that was removed, or a privilege that should not be there.
func TestManagersMayDoOnlyWhatTheyNeed(t *testing.T) {
	ctx := context.Background()
	for _, mt := range managers {
		t.Run(mt.dir, func(t *testing.T) {
			m := install(t, mt)
			for _, r := range append(commonRows(m.lease), m.rows...) {
				resource, subresource, _ := strings.Cut(r.resource, "/")
				for _, verb := range r.verbs {
					sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
						User:   m.user(),
						Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + m.namespace, "system:authenticated"},
						ResourceAttributes: &authorizationv1.ResourceAttributes{
							Namespace: m.ns(r.ns), Verb: verb, Group: r.group, Resource: resource, Subresource: subresource, Name: r.name,
						},
					}}
					if err := env.Client.Create(ctx, sar); err != nil {
						t.Fatalf("SubjectAccessReview: %v", err)
					}
					if sar.Status.Allowed != r.allow {
						t.Errorf("%s manager: can %s: %v, want %v (%s)", m.dir, describe(verb, r, m), sar.Status.Allowed, r.allow, r.why)
					}
				}
			}
		})
	}
}

func describe(verb string, r row, m installed) string {
	what := r.resource
	if r.group != "" {
		what += "." + r.group
	}
	if r.name != "" {
		what += " " + r.name
	}
	switch ns := m.ns(r.ns); ns {
	case all:
		return verb + " " + what + " (all namespaces, or cluster-scoped)"
	default:
		return verb + " " + what + " in namespace " + ns
	}
}

// grant is one verb a manager's roles grant: on a resource of a group, in its own namespace
// (a Role) or in every namespace (a ClusterRole), possibly on one name only.
type grant struct {
	role                  string
	clusterWide           bool
	group, resource, verb string
	name                  string
}

// TestEveryGrantIsInTheTable expands the rules of every Role and ClusterRole bound to a manager's
// ServiceAccount into single grants and checks that each is an allowed row of the manager's
// table: a verb added to a kubebuilder marker or to a Role without a reason in the table fails
// here, so the table stays the complete list of what each manager may do.
func TestEveryGrantIsInTheTable(t *testing.T) {
	for _, mt := range managers {
		t.Run(mt.dir, func(t *testing.T) {
			m := install(t, mt)
			rows := append(commonRows(m.lease), m.rows...)
			grants := boundGrants(t, m)
			if len(grants) == 0 {
				t.Fatalf("no Role or ClusterRole of %s/config/default is bound to ServiceAccount %s/%s", m.dir, m.namespace, m.serviceAccount)
			}
			for _, g := range grants {
				if !covered(g, rows) {
					scope := "in its own namespace"
					if g.clusterWide {
						scope = "in every namespace"
					}
					what := g.resource
					if g.group != "" {
						what += "." + g.group
					}
					if g.name != "" {
						what += " " + g.name
					}
					t.Errorf("%s %s grants the %s manager %s %s %s, which its table in test/rbac/rbac_test.go does not list: "+
						"add a row that says why the code needs it, or remove the grant", map[bool]string{true: "ClusterRole", false: "Role"}[g.clusterWide],
						g.role, m.dir, g.verb, what, scope)
				}
			}
		})
	}
}

// covered tells whether an allowed row grants g: same group, resource, verb and name, and a
// namespace of the same scope (own for a Role; another namespace or all for a ClusterRole).
func covered(g grant, rows []row) bool {
	for _, r := range rows {
		if !r.allow || r.group != g.group || r.resource != g.resource || r.name != g.name || (r.ns == own) == g.clusterWide {
			continue
		}
		for _, v := range r.verbs {
			if v == g.verb {
				return true
			}
		}
	}
	return false
}

// boundGrants returns the grants of the Roles and ClusterRoles of the manager's components that
// are bound to its ServiceAccount.
func boundGrants(t *testing.T, m installed) []grant {
	t.Helper()
	roles := map[string]unstructured.Unstructured{}
	for _, o := range components[m.dir] {
		if o.GetKind() == "Role" || o.GetKind() == "ClusterRole" {
			roles[o.GetKind()+"/"+o.GetName()] = o
		}
	}
	var out []grant
	for _, o := range components[m.dir] {
		if o.GetKind() != "RoleBinding" && o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding // a ClusterRoleBinding has the same subjects and roleRef
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
			t.Fatal(err)
		}
		bound := false
		for _, s := range b.Subjects {
			bound = bound || (s.Kind == rbacv1.ServiceAccountKind && s.Name == m.serviceAccount && s.Namespace == m.namespace)
		}
		if !bound {
			continue
		}
		roleObj, ok := roles[b.RoleRef.Kind+"/"+b.RoleRef.Name]
		if !ok {
			t.Fatalf("%s %s binds %s %s, which is not in %s/config/default", o.GetKind(), o.GetName(), b.RoleRef.Kind, b.RoleRef.Name, m.dir)
		}
		var role rbacv1.ClusterRole // a Role has the same rules
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(roleObj.Object, &role); err != nil {
			t.Fatal(err)
		}
		if o.GetKind() == "RoleBinding" && o.GetNamespace() != m.namespace {
			t.Errorf("RoleBinding %s/%s of the %s manager is outside its namespace %s", o.GetNamespace(), o.GetName(), m.dir, m.namespace)
		}
		for _, rule := range role.Rules {
			if len(rule.NonResourceURLs) > 0 {
				t.Errorf("%s %s grants non-resource URLs %v: no manager needs any", b.RoleRef.Kind, b.RoleRef.Name, rule.NonResourceURLs)
			}
			names := rule.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, group := range rule.APIGroups {
				for _, resource := range rule.Resources {
					for _, verb := range rule.Verbs {
						for _, name := range names {
							out = append(out, grant{role: roleObj.GetName(), clusterWide: o.GetKind() == "ClusterRoleBinding",
								group: group, resource: resource, verb: verb, name: name})
						}
					}
				}
			}
		}
	}
	return out
}
