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

package etcd

import (
	"strings"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// A member's data dir lives on its host's disk (/var/lib/etcd). The simulator keeps a member per
// node name, across its Node's deletion and return: a host that keeps its disk (cleaning
// disabled: inventory.Host.TearDown) and is installed again under the same node name has NOT
// kept its data, as the installation rewrote the disk (inventory.Host.DiskWrites: the
// assisted-installer wipes the installation disk and coreos-installer writes the image over it,
// openshift/assisted-installer src/installer/installer.go InstallNode, cleanupInstallDevice and
// writeImageToDisk). Its etcd then starts with an empty data dir, as on a new host: when its old
// member (same name and peer URL) is still in the cluster, cluster-etcd-operator's
// MemberAddAsLearner is refused and the pod crash-loops until someone removes the member
// (ensureMembers); when it was removed, it joins as a new learner. Real etcd never gets to run a
// removed member's old data dir here ("the member has been permanently removed from the
// cluster"): the disk no longer holds it.

// hostOf returns the inventory's host of the member: by the system UUID of its Node, or the host
// whose hostname is the node name when the Node reports none (nil without an inventory).
func (s *Simulator) hostOf(m *member) *inventory.Host {
	if s.Inventory == nil {
		return nil
	}
	if m.systemUUID != "" {
		return s.Inventory.BySystemUUID(m.systemUUID)
	}
	for _, h := range s.Inventory.Hosts() {
		if strings.EqualFold(h.Hostname, m.name) {
			return h
		}
	}
	return nil
}

// noteDataDir records where the member's new data dir was created: on which host's disk, at
// which of its writes. Called with s.mu held, when a member starts without data.
func (s *Simulator) noteDataDir(m *member) {
	m.dataHost, m.dataDiskWrites = "", 0
	if h := s.hostOf(m); h != nil {
		m.dataHost, m.dataDiskWrites = h.SystemUUID, h.DiskWrites()
	}
}

// dataGone tells why the member's data dir is no longer on the disk of the host its Node runs on
// ("" when it is, or when the simulator cannot tell: no inventory, or the host is not in it): the
// disk was rewritten since (a reinstallation), or the node name now runs on another host.
// Called with s.mu held.
func (s *Simulator) dataGone(m *member) string {
	if !m.hasData || m.dataHost == "" {
		return ""
	}
	h := s.hostOf(m)
	switch {
	case h == nil:
		return ""
	case !strings.EqualFold(h.SystemUUID, m.dataHost):
		return "the node runs on another host than the one whose disk holds the member's data dir"
	case h.DiskWrites() != m.dataDiskWrites:
		return "its host's disk was written since (installed again): the member's data dir is gone"
	}
	return ""
}
