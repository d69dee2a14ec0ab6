package testenv

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// LeakWait is how long CheckGoroutines waits for the goroutines a test
// started to end after its cleanups ran: a stopped server's connection
// readers and timers take a moment, more on a loaded 2-core CI box.
const LeakWait = 10 * time.Second

// CheckGoroutines fails t when a goroutine started after this call is still
// running once the test and every cleanup registered after this call have
// run (cleanups run last-in first-out, so call it first: before the test
// starts a server, a bus or a client whose cleanup stops it). It polls for
// up to LeakWait, so a goroutine that is on its way out is no leak, and
// lists the stacks of the ones left.
//
// ignore names goroutines that legitimately outlive the test (a process-wide
// worker a library starts once, on first use); give each a comment saying
// what it is. Tests that call it must not run in parallel with others
// (t.Parallel): their goroutines would count.
func CheckGoroutines(t testing.TB, ignore ...goleak.Option) {
	t.Helper()
	opts := append([]goleak.Option{goleak.IgnoreCurrent()}, ignore...)
	t.Cleanup(func() {
		t.Helper()
		deadline := time.Now().Add(LeakWait)
		for {
			err := goleak.Find(opts...) // retries itself for about half a second
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutines still running %v after the test ended (a leak):\n%v", LeakWait, err)
				return
			}
		}
	})
}

// EmbeddedNATSConsumers ignores the goroutines an embedded NATS server
// (pkg/events/natsjs started in process) runs for each durable consumer on
// its side: they belong to the server, not to the client that created the
// consumer, and outlive it by design (the next process resumes the
// consumer where the last one acknowledged); they end when the server
// stops, which a test's bus cleanup does after the check.
var EmbeddedNATSConsumers = []goleak.Option{
	goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*consumer).loopAndGatherMsgs"),
	goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*consumer).processInboundAcks"),
	goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*consumer).processInboundNextMsgReqs"),
	goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*consumerFileStore).flushLoop"),
}
