package delivery_test

import (
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/pkg/delivery"
	"github.com/cmsplatform/cms/pkg/delivery/deliverytest"
)

// BenchmarkListWithDeleted: a typed Delivery list page (take 20, sorted by
// displayName, at a moving offset) over 5,000 objects of which 1,000 are
// soft-deleted, on in-memory Bleve. The deleted ones are in the index with
// their flag and left out by the list's query; compare with an index
// without them to see what keeping them costs a list.
func BenchmarkListWithDeleted(b *testing.B) {
	const total, deleted = 5000, 1000
	s := deliverytest.NewSite(b)
	ch := content.Change{Caller: &auth.Principal{Name: "bench"}}
	js := func(v any) json.RawMessage { r, _ := json.Marshal(v); return r }
	api := "benchItem"
	_, ids, err := s.Content.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: content.RootID, APIIdentifier: &api,
		Values: []content.ValueInput{{Attribute: 1000, Language: 201, JSON: js("Bench item")}}}})
	if err != nil {
		b.Fatal(err)
	}
	in := make([]content.ObjectInput, total)
	for i := range in {
		in[i] = content.ObjectInput{TypeID: ids[0], Values: []content.ValueInput{{Attribute: 1000, Language: 201, JSON: js(fmt.Sprintf("Item %05d", i))}}}
	}
	var objs []int64
	for chunk := range slices.Chunk(in, 1000) {
		_, got, err := s.Content.CreateObjects(ctx, "4", ch, chunk)
		if err != nil {
			b.Fatal(err)
		}
		objs = append(objs, got...)
	}
	var doomed []string
	for i := 0; i < total && len(doomed) < deleted; i += total / deleted {
		doomed = append(doomed, strconv.FormatInt(objs[i], 10))
	}
	for chunk := range slices.Chunk(doomed, 500) {
		if _, _, err := s.Content.DeleteObjects(ctx, "4", ch, chunk); err != nil {
			b.Fatal(err)
		}
	}
	s.Publish(b)
	list := func(i int) {
		l, err := s.Svc.List(ctx, delivery.Request{Branch: "4", Type: api, Sort: "displayName", Skip: int64(i*20) % (total - deleted), Take: 20})
		if err != nil || len(l.Objs) == 0 {
			b.Fatalf("list: %d objects, %v", len(l.Objs), err)
		}
	}
	list(0) // the meta-model and the engine's columns are loaded once
	// CPU time as well as wall time: on a loaded machine the wall time
	// mostly measures the wait for a core.
	start, n := cpuTime(b), 0
	for i := 0; b.Loop(); i++ {
		list(i)
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(n), "cpu-ns/op")
}

// cpuTime is the CPU time (user and system) the process used so far.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
