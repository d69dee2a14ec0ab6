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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
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
