package natsjs_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/events"
	"github.com/cmsplatform/cms/pkg/events/natsjs"
)

// killedConsumerDirEnv makes the test binary the helper process of
// TestEmbeddedRedeliversAtOnceAfterKill.
const killedConsumerDirEnv = "NATSJS_KILLED_CONSUMER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(killedConsumerDirEnv); dir != "" {
		os.Exit(killedConsumer(dir))
	}
	if spec := os.Getenv(killedBatchEnv); spec != "" {
		os.Exit(killedBatchConsumer(spec))
	}
	os.Exit(m.Run())
}

// killedConsumer opens the embedded server on dir and consumes with the
// durable "indexer"; it reports the first message on stdout and then
// blocks in the handler until it is killed.
func killedConsumer(dir string) int {
	b, err := natsjs.NewEmbedded(context.Background(), natsjs.EmbeddedConfig{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	err = b.Consume(context.Background(), "indexer", "cms.changes.>", func(_ context.Context, m events.Msg) error {
		fmt.Printf("handling %s\n", m.MsgID)
		select {}
	}, events.WithAckWait(time.Minute))
	fmt.Fprintln(os.Stderr, "Consume returned:", err)
	return 1
}

// TestEmbeddedRedeliversAtOnceAfterKill: a process is SIGKILLed while its
// durable consumer handles a message. The next process on the same data
// directory must get that message again at once: nobody can ack it any
// more, and with one message in flight (the indexer's setting) waiting
// for AckWait (a minute here) would stall the whole feed that long after
// every crash.
func TestEmbeddedRedeliversAtOnceAfterKill(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	b, err := natsjs.NewEmbedded(ctx, natsjs.EmbeddedConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := b.Publish(ctx, events.Event{Subject: fmt.Sprintf("cms.changes.objects.%d", i), MsgID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), killedConsumerDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "handling 1\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper process: %q, %v\n%s", line, err, stderr.String())
	}
	// The server writes a consumer's state at most ten times a second:
	// give it time to record the delivery, as a process that ran for a
	// while has.
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	b, err = natsjs.NewEmbedded(ctx, natsjs.EmbeddedConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var got []string
	err = b.Consume(cctx, "indexer", "cms.changes.>", func(_ context.Context, m events.Msg) error {
		got = append(got, m.MsgID)
		if len(got) == 3 {
			cancel()
		}
		return nil
	}, events.WithAckWait(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1 2 3]" {
		t.Fatalf("after the kill the next process got %v within %v, want [1 2 3] at once", got, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("all three messages %v after the restart", time.Since(start).Round(time.Millisecond))
}
