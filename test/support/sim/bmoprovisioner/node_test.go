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

package bmoprovisioner

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestSettleRunsChainedStepsInOrder: an operation's steps run each at its due time.
func TestSettleRunsChainedStepsInOrder(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	n := &node{provisionState: "manageable"}
	var done []string
	n.start(now, time.Second, "cleaning", "available", func() {
		done = append(done, "wiped")
		n.chain("clean wait", time.Second, func() {
			done = append(done, "off")
			n.finish("available")
		})
	})
	g.Expect(n.busy()).To(BeTrue())
	n.settle(now.Add(500 * time.Millisecond))
	g.Expect(done).To(BeEmpty())
	g.Expect(n.provisionState).To(BeEquivalentTo("cleaning"))
	n.settle(now.Add(time.Second))
	g.Expect(done).To(Equal([]string{"wiped"}))
	g.Expect(n.provisionState).To(BeEquivalentTo("clean wait"))
	n.settle(now.Add(5 * time.Second))
	g.Expect(done).To(Equal([]string{"wiped", "off"}))
	g.Expect(n.provisionState).To(BeEquivalentTo("available"))
	g.Expect(n.busy()).To(BeFalse())
}

// TestStartClearsTheLastError: a new operation forgets the last one's failure.
func TestStartClearsTheLastError(t *testing.T) {
	g := NewWithT(t)
	n := &node{}
	n.fail("enroll", "refused")
	g.Expect(n.lastError).To(Equal("refused"))
	n.start(time.Now(), time.Second, "verifying", "manageable", func() {})
	g.Expect(n.lastError).To(BeEmpty())
}

// TestSendStopsAtAFailure: what fails to be delivered is kept, with what follows it.
func TestSendStopsAtAFailure(t *testing.T) {
	g := NewWithT(t)
	host := inventory.Generate("unit", 1, inventory.GenerateOptions{})[0]
	n := &node{}
	n.tell(func(ctx context.Context, e inventory.HostEvents) error { return e.PoweredOff(ctx, host) })
	n.tell(func(ctx context.Context, e inventory.HostEvents) error { return e.Deprovisioned(ctx, host) })
	events := &hostEvents{}
	fails := failingOff{events}
	g.Expect(n.send(context.Background(), fails)).To(MatchError("BMC busy"))
	g.Expect(n.outbox).To(HaveLen(2))
	g.Expect(n.send(context.Background(), events)).To(Succeed())
	g.Expect(n.outbox).To(BeEmpty())
	g.Expect(events.off).To(Equal([]string{host.Name}))
	g.Expect(events.cleaned).To(Equal([]string{host.Name}))
	// Nobody to tell: the messages are dropped.
	n.tell(func(ctx context.Context, e inventory.HostEvents) error { return e.PoweredOff(ctx, host) })
	g.Expect(n.send(context.Background(), nil)).To(Succeed())
	g.Expect(n.outbox).To(BeEmpty())
}

type failingOff struct{ *hostEvents }

func (failingOff) PoweredOff(context.Context, *inventory.Host) error { return errors.New("BMC busy") }
