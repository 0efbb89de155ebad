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

package controllers_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	. "github.com/onsi/gomega"
	"github.com/openshift/assisted-service/api/common"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	infracontroller "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/internal/controllers"
)

// cpuFlags are the flags assisted-service's agent reports for a Cascade Lake server
// (/proc/cpuinfo, which the agent's inventory copies), as a real Agent carries them.
var cpuFlags = strings.Fields(`fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi
mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl
xtopology nonstop_tsc cpuid aperfmperf pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr
pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm
3dnowprefetch cpuid_fault epb cat_l3 cdp_l3 invpcid_single intel_ppin ssbd mba ibrs ibpb stibp ibrs_enhanced
tpr_shadow vnmi flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm cqm mpx
rdt_a avx512f avx512dq rdseed adx smap clflushopt clwb intel_pt avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1
xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local dtherm ida arat pln pts pku ospke avx512_vnni md_clear
flush_l1d arch_capabilities`)

// hostValidations are assisted-service's host validation IDs by group, as an Agent's
// status.validationsInfo lists them (internal/host/validation_id.go).
var hostValidations = map[string][]string{
	"hardware": {"has-inventory", "has-min-cpu-cores", "has-min-valid-disks", "has-min-memory", "has-cpu-cores-for-role",
		"has-memory-for-role", "sufficient-installation-diskspeed", "compatible-with-cluster-platform", "no-skip-installation-disk",
		"no-skip-missing-disk", "disk-encryption-requirements-satisfied", "vsphere-disk-uuid-enabled"},
	"network": {"connected", "media-connected", "machine-cidr-defined", "belongs-to-machine-cidr", "hostname-unique",
		"hostname-valid", "ignition-downloadable", "belongs-to-majority-group", "valid-platform-network-settings",
		"ntp-synced", "time-synced-between-host-and-service", "container-images-available",
		"sufficient-network-latency-requirement-for-role", "sufficient-packet-loss-requirement-for-role", "has-default-route",
		"api-domain-name-resolved-correctly", "api-int-domain-name-resolved-correctly", "apps-domain-name-resolved-correctly",
		"dns-wildcard-not-configured", "non-overlapping-subnets", "no-ip-collisions-in-network"},
	"operators": {"lso-requirements-satisfied", "odf-requirements-satisfied", "cnv-requirements-satisfied",
		"lvm-requirements-satisfied", "mce-requirements-satisfied"},
	"infrastructure": {"compatible-agent"},
}

// realisticStatus is the status assisted-service reports for a discovered server: the inventory
// with its CPU flags, three disks and four NICs in full, and every validation. The bind benchmark
// caches 2,000 of them, as a hub does.
func realisticStatus(name string, idx int, cpus int64, conds []conditionsv1.Condition) aiv1beta1.AgentStatus {
	inv := aiv1beta1.HostInventory{
		ReportTime: &metav1.Time{},
		Hostname:   "host-" + name,
		BmcAddress: fmt.Sprintf("10.0.%d.%d", idx/250, idx%250+1),
		Memory:     aiv1beta1.HostMemory{PhysicalBytes: 32 << 30, UsableBytes: 31 << 30},
		Cpu: aiv1beta1.HostCPU{Count: cpus, ClockMegahertz: 2900, Flags: cpuFlags, Architecture: "x86_64",
			ModelName: "Intel(R) Xeon(R) Gold 6226R CPU @ 2.90GHz"},
		Boot:         aiv1beta1.HostBoot{CurrentBootMode: "uefi"},
		SystemVendor: aiv1beta1.HostSystemVendor{Manufacturer: "Dell Inc.", ProductName: "PowerEdge R640", SerialNumber: name},
	}
	for d := range 3 {
		inv.Disks = append(inv.Disks, aiv1beta1.HostDisk{
			ID: fmt.Sprintf("/dev/disk/by-id/wwn-0x5000c500%08x%d", idx, d), DriveType: "SSD", Vendor: "ATA", Name: fmt.Sprintf("sd%c", 'a'+d),
			Path: fmt.Sprintf("/dev/sd%c", 'a'+d), Hctl: fmt.Sprintf("0:0:%d:0", d), ByPath: fmt.Sprintf("/dev/disk/by-path/pci-0000:18:00.0-scsi-0:0:%d:0", d),
			ByID: fmt.Sprintf("/dev/disk/by-id/wwn-0x5000c500%08x%d", idx, d), Model: "MZ7KH480HAHQ0D3", Wwn: fmt.Sprintf("0x5000c500%08x%d", idx, d),
			Serial: fmt.Sprintf("S47MNA0N%06d%d", idx, d), SizeBytes: 480 << 30, Bootable: d == 0, Smart: `{"json_format_version":[1,0],"smartctl":{"version":[7,1]}}`,
			InstallationEligibility: aiv1beta1.HostInstallationEligibility{Eligible: true, NotEligibleReasons: []string{}},
			IoPerf:                  aiv1beta1.HostIOPerf{SyncDurationMilliseconds: 2},
		})
	}
	for n := range 4 {
		iface := aiv1beta1.HostInterface{
			Name: fmt.Sprintf("eno%d", n+1), Vendor: "0x8086", Product: "0x1572", HasCarrier: n < 2, Mtu: 1500,
			Biosdevname: fmt.Sprintf("em%d", n+1), MacAddress: fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", n, idx>>16&0xff, idx>>8&0xff, idx&0xff),
			Flags: []string{"up", "broadcast", "multicast"}, SpeedMbps: 10000, IPV4Addresses: []string{}, IPV6Addresses: []string{},
		}
		if n == 0 {
			iface.IPV4Addresses = []string{fmt.Sprintf("192.168.%d.%d/16", idx/250, idx%250+1)}
			iface.IPV6Addresses = []string{fmt.Sprintf("fd00::%x/64", idx+1)}
		}
		inv.Interfaces = append(inv.Interfaces, iface)
	}
	validations := common.ValidationsStatus{}
	for group, ids := range hostValidations {
		for _, id := range ids {
			validations[group] = append(validations[group], common.ValidationResult{ID: id, Status: "success",
				Message: "The host passes the " + id + " validation of assisted-service for its role and cluster"})
		}
	}
	return aiv1beta1.AgentStatus{
		Role: models.HostRoleAutoAssign, Inventory: inv, Conditions: conds, ValidationsInfo: validations,
		NtpSources: []aiv1beta1.HostNTPSources{{SourceName: "clock.redhat.com", SourceState: models.SourceStateSynced}},
		DebugInfo:  aiv1beta1.DebugInfo{State: models.HostStatusKnownUnbound, StateInfo: "Host is ready to be bound to a cluster"},
	}
}

// TestTrimAgent checks the cache transform of Agents: it keeps every field the controllers read
// and drops the rest, and a claim's merge patch computed from trimmed copies carries none of
// what was dropped (so the API server keeps it).
func TestTrimAgent(t *testing.T) {
	g := NewWithT(t)
	conds := []conditionsv1.Condition{{Type: aiv1beta1.ConnectedCondition, Status: corev1.ConditionTrue, Reason: aiv1beta1.AgentConnectedReason}}
	full := &aiv1beta1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a1", UID: "u1", ResourceVersion: "7",
			Labels:        map[string]string{infrav1.FailureDomainLabel: "fd1"},
			Annotations:   map[string]string{corev1.LastAppliedConfigAnnotation: `{"spec":{}}`, "kept": "yes"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "assisted-service", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec:   aiv1beta1.AgentSpec{Approved: true, Hostname: "h1", MachineConfigPool: "worker"},
		Status: realisticStatus("a1", 1, 8, conds),
	}
	out, err := infracontroller.TrimAgent(full.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())
	trimmed := out.(*aiv1beta1.Agent)

	g.Expect(trimmed.ManagedFields).To(BeNil())
	g.Expect(trimmed.Annotations).To(Equal(map[string]string{"kept": "yes"}))
	g.Expect(trimmed.Labels).To(Equal(full.Labels))
	g.Expect(trimmed.Spec).To(Equal(full.Spec))
	g.Expect(trimmed.Status.Conditions).To(Equal(conds))
	g.Expect(trimmed.Status.DebugInfo).To(Equal(aiv1beta1.DebugInfo{State: models.HostStatusKnownUnbound}))
	inv := trimmed.Status.Inventory
	g.Expect(inv.Hostname).To(Equal("host-a1"))
	g.Expect(inv.Cpu).To(Equal(aiv1beta1.HostCPU{Count: 8, Architecture: "x86_64"}))
	g.Expect(inv.Memory).To(Equal(aiv1beta1.HostMemory{PhysicalBytes: 32 << 30}))
	// The disks as one of their total size; the NICs with an address only.
	g.Expect(inv.Disks).To(Equal([]aiv1beta1.HostDisk{{SizeBytes: 3 * 480 << 30}}))
	g.Expect(inv.Interfaces).To(Equal([]aiv1beta1.HostInterface{{MacAddress: full.Status.Inventory.Interfaces[0].MacAddress,
		IPV4Addresses: []string{"192.168.0.2/16"}, IPV6Addresses: []string{"fd00::2/64"}}}))
	g.Expect(inv.Interfaces).To(HaveCap(1))
	g.Expect(trimmed.Status.ValidationsInfo).To(BeNil())

	before, err := json.Marshal(full)
	g.Expect(err).NotTo(HaveOccurred())
	after, err := json.Marshal(trimmed)
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("an Agent as assisted-service reports it: %d bytes of JSON; as cached: %d", len(before), len(after))
	g.Expect(len(after)).To(BeNumerically("<", len(before)/4))

	// A claim, as claimAgent writes it from the cached copy.
	claimed := trimmed.DeepCopy()
	claimed.Labels[infrav1.AgentClaimedByLabel] = "am-uid"
	claimed.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Namespace: "ns", Name: "cd"}
	patch, err := client.MergeFromWithOptions(trimmed, client.MergeFromWithOptimisticLock{}).Data(claimed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(patch)).To(MatchJSON(`{"metadata":{"labels":{"capi-provider.agent-install.openshift.io/claimed-by":"am-uid"},"resourceVersion":"7"},` +
		`"spec":{"clusterDeploymentName":{"namespace":"ns","name":"cd"}}}`))

	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ManagedFields: full.ManagedFields}}
	out, err = infracontroller.TrimAgent(other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(BeIdenticalTo(other))
	g.Expect(other.ManagedFields).To(HaveLen(1), "not an Agent: unchanged")
}

// TestTrimAgentConditionsAndStrings checks that the cache keeps the conditions the controllers
// read, without their times, and that Agents share what they repeat: one slice of conditions
// for the same conditions, one slice of disks for the same total, one copy of each string (but
// of a long message, which may be a host's own).
func TestTrimAgentConditionsAndStrings(t *testing.T) {
	g := NewWithT(t)
	long := strings.Repeat("the host's own words ", 20)
	decode := func(name, bindReason string) *aiv1beta1.Agent {
		// Each Agent as the decoder gives it: strings of its own.
		conds := append(readyAgentConditions(), conditionsv1.Condition{Type: "SomethingNew", Status: corev1.ConditionTrue, Reason: "New"})
		conds[0].Message = long
		conds[5].Reason = bindReason
		full := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Status: realisticStatus(name, 1, 4, conds)}
		raw, err := json.Marshal(full)
		g.Expect(err).NotTo(HaveOccurred())
		a := &aiv1beta1.Agent{}
		g.Expect(json.Unmarshal(raw, a)).To(Succeed())
		out, err := infracontroller.TrimAgent(a)
		g.Expect(err).NotTo(HaveOccurred())
		return out.(*aiv1beta1.Agent)
	}
	a, b, c := decode("a1", aiv1beta1.UnboundReason), decode("a2", aiv1beta1.UnboundReason), decode("a3", aiv1beta1.UnbindingPendingUserActionReason)
	var types []conditionsv1.ConditionType
	for _, cond := range a.Status.Conditions {
		types = append(types, cond.Type)
		g.Expect(cond.LastHeartbeatTime.IsZero() && cond.LastTransitionTime.IsZero()).To(BeTrue(), "times dropped")
	}
	g.Expect(types).To(Equal([]conditionsv1.ConditionType{aiv1beta1.ConnectedCondition, aiv1beta1.ValidatedCondition,
		aiv1beta1.RequirementsMetCondition, aiv1beta1.SpecSyncedCondition, aiv1beta1.InstalledCondition, aiv1beta1.BoundCondition}))
	g.Expect(a.Status.Conditions).To(HaveCap(len(types)))
	g.Expect(a.Status.Conditions[0].Message).To(Equal(long))
	g.Expect(a.Status.Conditions[5].Reason).To(Equal(aiv1beta1.UnboundReason))
	g.Expect(c.Status.Conditions[5].Reason).To(Equal(aiv1beta1.UnbindingPendingUserActionReason))

	g.Expect(&a.Status.Conditions[0]).To(BeIdenticalTo(&b.Status.Conditions[0]), "the same conditions share a slice")
	g.Expect(&a.Status.Conditions[0]).NotTo(BeIdenticalTo(&c.Status.Conditions[0]))
	g.Expect(&a.Status.Inventory.Disks[0]).To(BeIdenticalTo(&c.Status.Inventory.Disks[0]), "the same disk total shares a slice")
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) } //nolint:gosec // compares where two strings' bytes are, reads nothing
	g.Expect(same(a.Namespace, c.Namespace)).To(BeTrue(), "namespace")
	g.Expect(same(a.Status.Conditions[1].Reason, c.Status.Conditions[1].Reason)).To(BeTrue(), "reason")
	g.Expect(same(string(a.Status.Conditions[1].Status), string(c.Status.Conditions[1].Status))).To(BeTrue(), "status")
	g.Expect(same(a.Status.Inventory.Cpu.Architecture, c.Status.Inventory.Cpu.Architecture)).To(BeTrue(), "architecture")
	g.Expect(same(a.Status.DebugInfo.State, c.Status.DebugInfo.State)).To(BeTrue(), "state")
	g.Expect(same(a.Status.Conditions[0].Message, c.Status.Conditions[0].Message)).To(BeFalse(), "a long message is not interned")
	g.Expect(same(a.Name, b.Name)).To(BeFalse())
}

// servedAgent is the JSON of an Agent as the API server serves the bind benchmark's Agents
// (createReadyAgent): its metadata with the managed fields of its creation and of
// assisted-service's status updates, and realisticStatus with the conditions of a free host.
func servedAgent(tb testing.TB, i int) []byte {
	tb.Helper()
	name := fmt.Sprintf("agent-%05d", i)
	now := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	fields := func(manager, raw string, sub string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "agent-install.openshift.io/v1beta1",
			Time: &now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}, Subresource: sub}
	}
	a := &aiv1beta1.Agent{
		TypeMeta: metav1.TypeMeta{APIVersion: "agent-install.openshift.io/v1beta1", Kind: "Agent"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench-x7k2p", Name: name, UID: types.UID(fmt.Sprintf("6f1c2a4e-0d3b-4c8e-9a7f-%012d", i)),
			ResourceVersion: fmt.Sprint(100000 + i), Generation: 1, CreationTimestamp: now,
			ManagedFields: []metav1.ManagedFieldsEntry{
				fields("assisted-service", `{"f:spec":{".":{},"f:approved":{},"f:role":{}}}`, ""),
				fields("assisted-service", `{"f:status":{".":{},"f:conditions":{},"f:debugInfo":{".":{},"f:state":{},"f:stateInfo":{}},`+
					`"f:inventory":{".":{},"f:bmcAddress":{},"f:boot":{},"f:cpu":{},"f:disks":{},"f:hostname":{},"f:interfaces":{},"f:memory":{},`+
					`"f:reportTime":{},"f:systemVendor":{}},"f:ntpSources":{},"f:role":{},"f:validationsInfo":{}}}`, "status"),
			}},
		Spec:   aiv1beta1.AgentSpec{Approved: true, Role: "worker"},
		Status: realisticStatus(name, i, int64(4+i%8), readyAgentConditions()),
	}
	raw, err := json.Marshal(a)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// BenchmarkCachedAgent measures what a cached Agent costs: it decodes 2,000 Agents as the API
// server serves them (servedAgent) with the JSON serializer client-go's informers decode watch
// events with, passes each through TrimAgent as the informer does, keeps them, and reports the
// heap they retain per Agent (after a GC, as the cache holds them) and the bytes allocated per
// Agent to decode and trim it (what the GC must collect during a first list). Both figures are
// deterministic for a given Go version and shape of Agent, unlike a process's resident set.
func BenchmarkCachedAgent(b *testing.B) {
	const n = 2000
	raw := make([][]byte, n)
	for i := range raw {
		raw[i] = servedAgent(b, i)
	}
	decoder := serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(env.Scheme)}.UniversalDeserializer()
	for b.Loop() {
		kept := make([]any, n)
		var before, decoded, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range raw {
			obj, _, err := decoder.Decode(raw[i], nil, &aiv1beta1.Agent{})
			if err != nil {
				b.Fatal(err)
			}
			if kept[i], err = infracontroller.TrimAgent(obj); err != nil {
				b.Fatal(err)
			}
		}
		runtime.ReadMemStats(&decoded)
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(kept)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "B-retained/Agent")
		b.ReportMetric(float64(decoded.TotalAlloc-before.TotalAlloc)/n, "B-allocated/Agent")
		b.ReportMetric(float64(len(raw[0])), "B-JSON/Agent")
	}
}
