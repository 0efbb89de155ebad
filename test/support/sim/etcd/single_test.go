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
	"testing"
)

// TestSingleMembers: each node's etcd is a single healthy member named after the node, which
// leads, and whose Status names the member MemberList lists.
func TestSingleMembers(t *testing.T) {
	s := &SingleMembers{}
	defer s.Stop()
	ids := map[uint64]string{}
	for _, node := range []string{"sno-a", "sno-b"} {
		cli, err := s.Connect(t.Context(), nil, node)
		if err != nil {
			t.Fatal(err)
		}
		list, err := cli.MemberList(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Members) != 1 || list.Members[0].Name != node || list.Members[0].ID == 0 {
			t.Fatalf("node %s: members %v, want one named after the node", node, list.Members)
		}
		id := list.Members[0].ID
		if other, seen := ids[id]; seen {
			t.Fatalf("nodes %s and %s share member ID %x", other, node, id)
		}
		ids[id] = node
		alarms, err := cli.AlarmList(t.Context())
		if err != nil || len(alarms.Alarms) != 0 {
			t.Fatalf("node %s: alarms %v, %v", node, alarms, err)
		}
		st, err := cli.Status(t.Context(), cli.Endpoints()[0])
		if err != nil {
			t.Fatal(err)
		}
		if st.Header.MemberId != id || st.Leader != id {
			t.Fatalf("node %s: status of member %x led by %x, want %x leading", node, st.Header.MemberId, st.Leader, id)
		}
		_ = cli.Close()
	}
}
