// Command cms is the content platform in one binary: `cms run` starts every
// service on embedded components, `cms serve --target=<service>` runs one
// service against PostgreSQL, NATS, Elasticsearch and Redis.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cmsplatform/cms/pkg/tracing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Traces, when the OTEL_* settings ask for them (pkg/tracing);
	// OTEL_SERVICE_NAME names the process (default "cms").
	shutdown, err := tracing.Setup(ctx, "cms")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cms:", err)
		os.Exit(1)
	}
	err = newRootCommand().ExecuteContext(ctx)
	flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = shutdown(flush)
	cancel()
	if err != nil {
		var code exitCode
		if errors.As(err, &code) {
			os.Exit(int(code)) // the command printed its own report
		}
		fmt.Fprintln(os.Stderr, "cms:", err)
		os.Exit(1)
	}
}

// exitCode is the error of a command whose output already says what went
// wrong and that only sets the process's exit code (`cms doctor`).
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit code %d", int(c)) }
