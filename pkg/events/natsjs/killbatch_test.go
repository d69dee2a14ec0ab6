package natsjs_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
	testsetups "github.com/cmsplatform/cms/pkg/testenv/setups"
)

// killedBatchEnv makes the test binary the consumer process of
// TestConsumeBatchKilledRecovery: "<mode> <NATS URL> <namespace>".
const killedBatchEnv = "NATSJS_KILLED_BATCH"

// killedRecoveryBound is how soon after the restart the next consumer
// must have every message, whether the killed one was idle or held a
// batch (the indexer's "visible within 5 s of the restart").
const killedRecoveryBound = 5 * time.Second

// killedBatchConsumer consumes the durable "indexer" of the namespace on
// an external server with ConsumeBatch and the default options, as the
// indexer does. Mode "busy" reports its first batch on stdout ("batch
// <n>") and blocks in the handler until it is killed; mode "idle"
// handles every batch and reports "handled <last sequence>".
func killedBatchConsumer(spec string) int {
	f := strings.Fields(spec)
	if len(f) != 3 {
		fmt.Fprintln(os.Stderr, "want: mode url namespace")
		return 2
	}
	mode, url, ns := f[0], f[1], f[2]
	b, err := natsjs.Connect(context.Background(), url, natsjs.Options{Stream: events.StreamConfig{Namespace: ns}, Name: "killed-batch"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = b.ConsumeBatch(context.Background(), "indexer", "cms.changes.>", func(_ context.Context, ms []events.Msg) (int, error) {
		if mode == "busy" {
			fmt.Printf("batch %d\n", len(ms))
			select {}
		}
		fmt.Printf("handled %d\n", ms[len(ms)-1].Sequence)
		return len(ms), nil
	})
	fmt.Fprintln(os.Stderr, "ConsumeBatch returned:", err)
	return 1
}

// TestConsumeBatchKilledRecovery SIGKILLs a process consuming the
// change stream of a real NATS server (CMS_NATS_URL) with ConsumeBatch
// and starts the next consumer of the same durable at once; it must have
// every message within killedRecoveryBound of that restart:
//
//   - busy: the process holds a batch of 14 unacknowledged messages (an
//     indexer killed while behind). The server redelivers them only after
//     the dead consumer's AckWait; with the former 30 s that took 23-29 s
//     (the deadline extended every 10 s while the batch was applied).
//   - idle: the process had handled everything; a message published
//     after the restart must arrive at once.
func TestConsumeBatchKilledRecovery(t *testing.T) {
	t.Run("busy", func(t *testing.T) {
		bus, ns := testsetups.NATSBus(t, "kill", "kill-batch-test")
		const behind = 14
		publishN(t, bus, 1, behind)
		p := startKilledBatch(t, "busy", ns)
		if line := p.line(t); !strings.HasPrefix(line, "batch ") {
			t.Fatalf("consumer process: %q", line)
		}
		// Everything published is delivered to it (pulled ahead of the
		// batch) and unacknowledged.
		waitConsumer(t, bus, func(ci *jetstream.ConsumerInfo) bool { return ci.NumAckPending == behind })
		p.kill(t)
		took, got := restartConsumer(t, bus, behind, nil)
		t.Logf("killed holding %d messages: all handled %v after the restart (%v)", behind, took.Round(time.Millisecond), got)
		if took > killedRecoveryBound {
			t.Errorf("messages of the killed consumer handled %v after the restart, want at most %v", took.Round(time.Millisecond), killedRecoveryBound)
		}
		for i, seq := range got {
			if seq != uint64(i+1) {
				t.Fatalf("handled out of stream order or twice: %v", got)
			}
		}
	})
	t.Run("idle", func(t *testing.T) {
		bus, ns := testsetups.NATSBus(t, "kill", "kill-batch-test")
		publishN(t, bus, 1, 3)
		p := startKilledBatch(t, "idle", ns)
		for line := p.line(t); line != "handled 3"; line = p.line(t) {
			t.Logf("consumer process: %s", line)
		}
		waitConsumer(t, bus, func(ci *jetstream.ConsumerInfo) bool { return ci.AckFloor.Stream == 3 && ci.NumAckPending == 0 })
		p.kill(t)
		took, got := restartConsumer(t, bus, 1, func() { publishN(t, bus, 4, 4) })
		t.Logf("killed idle: the next message handled %v after the restart (%v)", took.Round(time.Millisecond), got)
		if took > killedRecoveryBound {
			t.Errorf("message published after the restart handled %v after it, want at most %v", took.Round(time.Millisecond), killedRecoveryBound)
		}
		if len(got) != 1 || got[0] != 4 {
			t.Fatalf("after the restart handled %v, want [4]", got)
		}
	})
}

func publishN(t *testing.T, bus events.Publisher, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if err := bus.Publish(t.Context(), events.Event{Subject: fmt.Sprintf("cms.changes.%d", i), MsgID: fmt.Sprint(i), Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
}

// killedProc is the consumer process.
type killedProc struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	stderr strings.Builder
}

func startKilledBatch(t *testing.T, mode, ns string) *killedProc {
	t.Helper()
	url := os.Getenv("CMS_NATS_URL")
	p := &killedProc{cmd: exec.Command(os.Args[0])}
	p.cmd.Env = append(os.Environ(), killedBatchEnv+"="+mode+" "+url+" "+ns)
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.out = bufio.NewReader(out)
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	return p
}

// line reads the process's next line (bounded by the test's deadline:
// the process exits when it fails).
func (p *killedProc) line(t *testing.T) string {
	t.Helper()
	line, err := p.out.ReadString('\n')
	if err != nil {
		t.Fatalf("consumer process: %q, %v\n%s", line, err, p.stderr.String())
	}
	return strings.TrimSuffix(line, "\n")
}

func (p *killedProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
}

// waitConsumer polls the durable "indexer" until ok (at most 10 s).
func waitConsumer(t *testing.T, bus *natsjs.Bus, ok func(*jetstream.ConsumerInfo) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := bus.JetStream().Consumer(t.Context(), bus.JetStreamName(), "indexer")
		var ci *jetstream.ConsumerInfo
		if err == nil {
			ci, err = c.Info(t.Context())
		}
		if err == nil && ok(ci) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer state not reached: %+v %v", ci, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// restartConsumer starts the next consumer of the durable "indexer" (the
// restart), runs then (a write after the restart) and returns how long
// after the restart it had handled want messages (at most 40 s, so a
// slow recovery is measured, not only refused) and their sequences.
func restartConsumer(t *testing.T, bus *natsjs.Bus, want int, then func()) (time.Duration, []uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []uint64
	var took time.Duration
	restarted := time.Now()
	done := make(chan error, 1)
	go func() {
		done <- bus.ConsumeBatch(ctx, "indexer", "cms.changes.>", func(_ context.Context, ms []events.Msg) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ms {
				got = append(got, m.Sequence)
			}
			if len(got) >= want && took == 0 {
				took = time.Since(restarted)
				cancel()
			}
			return len(ms), nil
		})
	}()
	if then != nil {
		then()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if took == 0 {
		t.Fatalf("after the restart %d of %d messages in %v: %v", len(got), want, time.Since(restarted).Round(time.Millisecond), got)
	}
	return took, got
}
