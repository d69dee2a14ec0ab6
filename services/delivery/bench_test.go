package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cmsplatform/cms/pkg/auth"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
)

// fetch GETs url as the reader and drains the body.
func fetch(b *testing.B, c *http.Client, url string, want int) []byte {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.SetBasicAuth("reader", "pw")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("GET %s = %d: %s", url, resp.StatusCode, body)
	}
	return body
}

// BenchmarkCachedGet compares a cached Delivery GET with a bare net/http
// handler writing the same bytes, both on loopback in the same run, one
// client, HTTP Basic as a read-only user. "http" is the deployed path
// (HTTPCache in front of the gateway: authenticate, check the read grant,
// answer from the cache); "grpc" is the path behind it (gateway → gRPC →
// proto cache → JSON), used on HTTP-cache misses and by gRPC clients.
// ratio-% = bare time / Delivery time (target ≥ 50 for "http").
func BenchmarkCachedGet(b *testing.B) {
	b.Run("http", func(b *testing.B) { benchCachedGet(b, true) })
	b.Run("grpc", func(b *testing.B) { benchCachedGet(b, false) })
}

func benchCachedGet(b *testing.B, httpCache bool) {
	h := newHarnessOpts(b, testUsers, httpCache)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	url := h.url + "/branches/4/objects/home?resolve=moduleRefs"
	body := fetch(b, client, url, 200)
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"0123456789012345678901"`)
		_, _ = w.Write(body)
	}))
	defer bare.Close()
	fetch(b, client, bare.URL, 200)
	var dlv, raw time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		fetch(b, client, url, 200)
		t1 := time.Now()
		fetch(b, client, bare.URL, 200)
		dlv += t1.Sub(t0)
		raw += time.Since(t1)
		n++
	}
	b.ReportMetric(float64(dlv.Nanoseconds())/float64(n), "delivery-ns/get")
	b.ReportMetric(float64(raw.Nanoseconds())/float64(n), "bare-ns/get")
	b.ReportMetric(100*float64(raw)/float64(dlv), "ratio-%")
}

// BenchmarkUncachedList100x60: a page of 100 objects that each reference
// 60 others (from a pool of 1000 targets, so the response resolves 1000
// distinct refs), with resolve, through HTTP without a response cache.
// Reports p50 and p99 (target p50 ≤ 15 ms on the embedded engine).
func BenchmarkUncachedList100x60(b *testing.B) {
	h := newHarnessOpts(b, testUsers, false)
	h.group.api.cache = nil
	ctx := context.Background()
	s := h.site
	ch := content.Change{Caller: &auth.Principal{Name: "bench"}}
	js := func(v any) json.RawMessage { r, _ := json.Marshal(v); return r }
	api := func(s string) *string { return &s }
	_, ids, err := s.Content.CreateObjects(ctx, "4", ch, []content.ObjectInput{{TypeID: content.TypeAttribute, APIIdentifier: api("links"),
		Values: []content.ValueInput{{Attribute: 1000, Language: 201, JSON: js("links")}, {Attribute: 1001, JSON: js("ObjRef")},
			{Attribute: 1004, JSON: js(true)}, {Attribute: 1017, JSON: js(false)}}}})
	if err != nil {
		b.Fatal(err)
	}
	links := ids[0]
	_, ids, err = s.Content.CreateObjects(ctx, "4", ch, []content.ObjectInput{
		{TypeID: content.RootID, APIIdentifier: api("article"), Values: []content.ValueInput{{Attribute: 1000, Language: 201, JSON: js("Article")}}},
		{TypeID: content.RootID, APIIdentifier: api("target"), Values: []content.ValueInput{{Attribute: 1000, Language: 201, JSON: js("Target")}}}})
	if err != nil {
		b.Fatal(err)
	}
	article, target := ids[0], ids[1]
	var targets []content.ObjectInput
	for i := range 1000 {
		targets = append(targets, content.ObjectInput{TypeID: target, Values: []content.ValueInput{
			{Attribute: 1000, Language: 201, JSON: js(fmt.Sprintf("Target %d", i))}}})
	}
	_, tids, err := s.Content.CreateObjects(ctx, "4", ch, targets)
	if err != nil {
		b.Fatal(err)
	}
	var arts []content.ObjectInput
	for i := range 100 {
		vals := []content.ValueInput{{Attribute: 1000, Language: 201, JSON: js(fmt.Sprintf("Article %03d", i))}}
		for j := range 60 {
			sr := int64(j)
			vals = append(vals, content.ValueInput{Attribute: links, SortReverse: &sr, JSON: js(tids[(i*10+j)%len(tids)])})
		}
		arts = append(arts, content.ObjectInput{TypeID: article, Values: vals})
	}
	if _, _, err := s.Content.CreateObjects(ctx, "4", ch, arts); err != nil {
		b.Fatal(err)
	}
	s.Publish(b)
	client := &http.Client{}
	url := h.url + "/branches/4/types/article/objects?take=100&resolve=links&resolveDepth=1&sort=displayName"
	var probe struct {
		Objs []json.RawMessage `json:"objs"`
		Refs []json.RawMessage `json:"refs"`
	}
	if err := json.Unmarshal(fetch(b, client, url, 200), &probe); err != nil || len(probe.Objs) != 100 || len(probe.Refs) != 1000 {
		b.Fatalf("objs %d refs %d: %v", len(probe.Objs), len(probe.Refs), err)
	}
	var durs []time.Duration
	cpu0 := processCPU(b)
	for b.Loop() {
		t0 := time.Now()
		fetch(b, client, url, 200)
		durs = append(durs, time.Since(t0))
	}
	// CPU time of the whole process (client, gateway, server, GC) per
	// request: steadier than wall time when the machine is shared.
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/1000/float64(len(durs)), "cpu-ms/op")
	slices.Sort(durs)
	ms := func(q float64) float64 {
		return float64(durs[min(len(durs)-1, int(q*float64(len(durs))))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}

// processCPU returns the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
