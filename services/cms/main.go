// Command cms is the content platform in one binary: `cms run` starts every
// service on embedded components, `cms serve --target=<service>` runs one
// service against PostgreSQL, NATS, Elasticsearch and Redis.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cms:", err)
		os.Exit(1)
	}
}
