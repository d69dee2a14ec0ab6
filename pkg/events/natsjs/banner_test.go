package natsjs_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/events/natsjs"
	"github.com/cmsplatform/cms/pkg/testenv"
)

// TestEmbeddedStartsQuietly: at info the embedded server logs one line
// (ready, with its store directory), not nats-server's banner; the banner
// is still there at debug.
func TestEmbeddedStartsQuietly(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var logs testenv.Buffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))
		b, err := natsjs.NewEmbedded(t.Context(), natsjs.EmbeddedConfig{Dir: t.TempDir(), Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		out := logs.String()
		banner := strings.Count(out, "component=nats-server")
		switch level {
		case slog.LevelInfo:
			if banner != 0 || strings.Count(out, "embedded NATS JetStream server ready") != 1 {
				t.Errorf("at info: %d nats-server lines, want only the ready line:\n%s", banner, out)
			}
		case slog.LevelDebug:
			if banner < 10 {
				t.Errorf("at debug: %d nats-server lines, want the banner:\n%s", banner, out)
			}
		}
	}
}
