package app

import (
	"fmt"
	"strings"
)

// targetSpec is one row of targetTable.
type targetSpec struct {
	name string
	// opens are the components the target uses: OpenComponents opens the
	// union over the process's targets, and nothing else.
	opens []string
	// ready is what its /readyz checks: each group needs one reachable
	// component of its list (PingAny). It is narrower than opens.
	ready [][]string
	// why is the reason, the last column of the README's table.
	why string
}

// targetTable is the one declaration of what each `--target` opens and
// what its readiness checks, in AllTargets order. The README's target
// table is generated from it (TestTargetTableDocumented).
var targetTable = []targetSpec{
	{name: TargetManagement, opens: []string{"store", "events", "blobs"}, ready: [][]string{{"store"}},
		why: "writes to the store; its outbox buffers the change events while NATS is away"},
	{name: TargetDelivery, opens: []string{"search", "cache", "events", "blobs", "store"}, ready: [][]string{{"cache", "search"}},
		why: "answers from its cache or the search engine, so neither outage alone takes every replica out of the load " +
			"balancer (the memory cache always answers); the store only authenticates users (a read-only role or a replica is enough)"},
	{name: TargetRendering, opens: []string{"store", "events", "blobs"}, ready: [][]string{{"store"}},
		why: "renders, builds stylesheets, reads binary proxy objects and checks read grants from the store (the Management " +
			"view), never the search index; its render cache is memory of its own, no cache component"},
	{name: TargetIndex, opens: []string{"search", "store"}, ready: [][]string{{"search"}},
		why: "answers from the search engine only; the store authenticates users"},
	{name: TargetIndexer, opens: []string{"store", "events", "search"}, ready: [][]string{{"events"}, {"search"}},
		why: "moves the change events into the search engine"},
	{name: TargetJobs, opens: []string{"store", "events", "blobs", "search"}, ready: [][]string{{"store"}, {"events"}},
		why: "reads and writes content, keeps logs and artifacts in the blob store and rebuilds the index"},
	{name: TargetWebhooks, opens: []string{"store", "events"}, ready: [][]string{{"store"}, {"events"}},
		why: "reads the definitions and consumes the changes"},
}

// target returns the row of name (the zero row for an unknown name).
func target(name string) targetSpec {
	for _, s := range targetTable {
		if s.name == name {
			return s
		}
	}
	return targetSpec{}
}

// targetTableMarkdown is the README's table of targetTable.
func targetTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| target | opens | `/readyz` needs | why |\n| --- | --- | --- | --- |\n")
	for _, s := range targetTable {
		ready := make([]string, 0, len(s.ready))
		for _, g := range s.ready {
			ready = append(ready, strings.Join(g, " or "))
		}
		if len(ready) == 0 {
			ready = append(ready, "nothing")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.name, strings.Join(s.opens, ", "), strings.Join(ready, " and "), s.why)
	}
	return b.String()
}
