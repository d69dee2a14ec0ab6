package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/cmsplatform/cms/pkg/testenv"
)

// The change stream over HTTP (server-sent events) and gRPC, on `cms run`
// and on separate management, indexer and delivery processes.

// liveConfig shortens what the scenario waits for: heartbeats every
// 300 ms, four retained changes (so an old position is easy to reach) and
// HTTP read and write timeouts of 2 s, below the stream's life (they must
// not cut it).
func liveConfig(cfg Config) Config {
	cfg.Live.Heartbeat = 300 * time.Millisecond
	cfg.Live.Retained = 4
	cfg.Edge.ReadTimeout, cfg.Edge.WriteTimeout = 2*time.Second, 2*time.Second
	cfg.CORSOrigins = []string{"http://page.test"}
	return cfg
}

func TestLiveChangesEmbedded(t *testing.T) {
	testenv.CheckGoroutines(t) // the streams, their subscriptions and the server all end
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	srv := startConfigured(t, liveConfig(cfg))
	base := "http://" + srv.HTTPAddr()
	runLiveScenario(t, base, base, srv.GRPCAddr())
}

// TestLiveChangesDistributed: `cms serve --target=delivery` serves the
// stream of what a separate Management process writes and a separate
// indexer indexes, on PostgreSQL, NATS, Elasticsearch and Redis.
func TestLiveChangesDistributed(t *testing.T) {
	testenv.CheckGoroutines(t) // the three processes, their clients of PostgreSQL, NATS, Elasticsearch and Redis, the streams
	config, _ := isolatedDistributed(t, "live")
	mgmt := "http://" + startConfigured(t, config(TargetManagement)).HTTPAddr()
	startConfigured(t, config(TargetIndexer))
	deliv := startConfigured(t, liveConfig(config(TargetDelivery)))
	runLiveScenario(t, mgmt, "http://"+deliv.HTTPAddr(), deliv.GRPCAddr())
}

// warmUp authenticates once at base: the password check (slow under the
// race detector) may outlast the scenario's short write timeout, which
// cuts that answer; later requests find the credentials cached.
func warmUp(t *testing.T, base string) {
	t.Helper()
	for range 5 {
		req, _ := http.NewRequest(http.MethodGet, base+"/delivery/api/branches", nil)
		req.SetBasicAuth("admin", "test-password")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			return
		}
	}
	t.Fatal("no answer to an authenticated request")
}

// sseEvent is one event or comment of a stream.
type sseEvent struct {
	id, event, data, comment string
}

type sseStream struct {
	t      *testing.T
	resp   *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

// openSSE opens a change stream; it fails t unless the answer is want.
func openSSE(t *testing.T, base, path, user, pass string, want int, hdr ...string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &sseStream{t: t, resp: resp, events: make(chan sseEvent, 100), cancel: cancel}
	t.Cleanup(s.close)
	if resp.StatusCode != want {
		b, _ := readAnswer(resp)
		t.Fatalf("GET %s = %d, want %d: %s", path, resp.StatusCode, want, b)
	}
	// The served Delivery document declares the operation (NovaDB's has
	// none): the stream's status and media type, or a ProblemDetails.
	doc := loadServedDoc(t, "Delivery")
	if want != http.StatusOK {
		b, _ := readAnswer(resp)
		doc.checkAnswer(t, http.MethodGet, path, "", httpResult{resp.StatusCode, resp.Header, b})
		return s
	}
	answer := httpResult{resp.StatusCode, resp.Header, nil}
	if strings.Contains(path, ",") {
		// A comma-separated list (docs/live-changes.md) is beyond what
		// the document's Swagger 2.0 can say (repeated parameters only).
		doc.checkAnswer(t, http.MethodGet, path, "", answer)
	} else {
		doc.check(t, http.MethodGet, path, "", answer)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				ev.comment = strings.TrimSpace(line[1:])
			default:
				k, v, _ := strings.Cut(line, ":")
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "id":
					ev.id = v
				case "event":
					ev.event = v
				case "data":
					ev.data = v
				}
			}
		}
	}()
	return s
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the next event that is no comment or retry frame.
func (s *sseStream) next() sseEvent {
	s.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				s.t.Fatal("the stream ended")
			}
			if ev.comment != "" || ev.event == "" && ev.data == "" {
				continue
			}
			return ev
		case <-deadline:
			s.t.Fatal("no event within 20s")
		}
	}
}

// quiet fails when an event (not a comment) arrives within d.
func (s *sseStream) quiet(d time.Duration) {
	s.t.Helper()
	end := time.After(d)
	for {
		select {
		case ev := <-s.events:
			if ev.comment == "" && (ev.event != "" || ev.data != "") {
				s.t.Fatalf("unexpected event %+v", ev)
			}
		case <-end:
			return
		}
	}
}

// change decodes a change event and checks its frame.
func (s *sseStream) change(kind string, version int64, objectID, typeID int64) {
	s.t.Helper()
	ev := s.next()
	var d struct {
		Version   int64   `json:"version"`
		Kind      string  `json:"kind"`
		Branch    int64   `json:"branch"`
		ObjectIDs []int64 `json:"objectIds"`
		Types     []int64 `json:"types"`
		User      string  `json:"user"`
	}
	if err := json.Unmarshal([]byte(ev.data), &d); err != nil {
		s.t.Fatalf("data %q: %v", ev.data, err)
	}
	if ev.id != strconv.FormatInt(version, 10) || ev.event != kind || d.Version != version || d.Kind != kind || d.Branch != 4 ||
		!slices.Equal(d.ObjectIDs, []int64{objectID}) || !slices.Equal(d.Types, []int64{typeID}) || d.User != "admin" {
		s.t.Fatalf("got id %q event %q data %s; want %s of object %d (type %d) at version %d on branch 4 by admin",
			ev.id, ev.event, ev.data, kind, objectID, typeID, version)
	}
}

func runLiveScenario(t *testing.T, mgmt, deliv, grpcAddr string) {
	warmUp(t, deliv)
	admin := httpClient{t, mgmt, "admin", "test-password"}
	reader := httpClient{t, deliv, "admin", "test-password"}
	typeA := admin.create(obj(0, "liveA", v(1000, 201, "Live A"))).CreatedObjectIDs[0]
	wb := admin.create(obj(0, "liveB", v(1000, 201, "Live B")))
	typeB := wb.CreatedObjectIDs[0]
	// The branch is in the index (an unknown branch is 404). Each wait stays
	// under liveConfig's 2 s write timeout, which cuts a longer one (EOF)
	// when a loaded indexer takes longer.
	pollUntil(t, 30*time.Second, "the types in Delivery", func() bool {
		return reader.do(http.MethodGet, "/delivery/api/branches/4/objects?take=1", "",
			"X-Cms-Min-Version", strconv.FormatInt(wb.Transaction.ID, 10), "X-Cms-Max-Wait", "1s").code == http.StatusOK
	})
	newObject := func(typeID int64, name string) (id, version int64) {
		w := admin.create(obj(typeID, "", v(1000, 201, name)))
		return w.CreatedObjectIDs[0], w.Transaction.ID
	}
	changes := "/delivery/api/branches/4/changes"

	// Without credentials: 401 like every Delivery route.
	openSSE(t, deliv, changes, "", "", http.StatusUnauthorized)
	openSSE(t, deliv, changes+"?kinds=renamed", "admin", "test-password", http.StatusBadRequest)
	openSSE(t, deliv, changes+"?since=abc", "admin", "test-password", http.StatusBadRequest)

	// Filters: only objects of type A; only updates.
	onlyA := openSSE(t, deliv, fmt.Sprintf("%s?types=%d", changes, typeA), "admin", "test-password", http.StatusOK)
	updates := openSSE(t, deliv, changes+"?kinds=updated,branchDeleted", "admin", "test-password", http.StatusOK,
		"Origin", "http://page.test")
	if got := updates.resp.Header.Get("Access-Control-Allow-Origin"); got != "http://page.test" {
		t.Errorf("Access-Control-Allow-Origin %q on the stream", got)
	}
	opened := time.Now()
	a1, v1 := newObject(typeA, "a1")
	newObject(typeB, "b1")
	a2, v2 := newObject(typeA, "a2")
	onlyA.change("created", v1, a1, typeA)
	onlyA.change("created", v2, a2, typeA)
	// The event comes once the index shows the change: Delivery has it.
	reader.must(http.StatusOK, http.MethodGet, fmt.Sprintf("/delivery/api/branches/4/objects/%d", a2), "")

	// A dropped connection resumes from Last-Event-ID (which wins over
	// the since of the URL it reconnects to): nothing lost, nothing twice.
	onlyA.close()
	a3, v3 := newObject(typeA, "a3")
	a4, v4 := newObject(typeA, "a4")
	resumed := openSSE(t, deliv, fmt.Sprintf("%s?types=%d&since=1", changes, typeA), "admin", "test-password", http.StatusOK,
		"Last-Event-ID", strconv.FormatInt(v2, 10))
	resumed.change("created", v3, a3, typeA)
	resumed.change("created", v4, a4, typeA)
	a5, v5 := newObject(typeA, "a5")
	resumed.change("created", v5, a5, typeA)
	resumed.quiet(500 * time.Millisecond)

	// A position older than the retained changes (four here): a reset
	// event naming the version to continue after, then live changes.
	old := openSSE(t, deliv, fmt.Sprintf("%s?types=%d&since=%d", changes, typeA, v1), "admin", "test-password", http.StatusOK)
	reset := old.next()
	at, _ := strconv.ParseInt(reset.id, 10, 64)
	if reset.event != "reset" || at < v5 || reset.data != fmt.Sprintf(`{"version":%d}`, at) {
		t.Fatalf("since %d: got %+v, want a reset at %d or later", v1, reset, v5)
	}
	a6, v6 := newObject(typeA, "a6")
	old.change("created", v6, a6, typeA)

	// Kinds: the update stream saw none of the creations; it has lived
	// beyond the server's read and write timeouts and gets heartbeats.
	if time.Since(opened) < 2500*time.Millisecond {
		time.Sleep(2500*time.Millisecond - time.Since(opened))
	}
	// a1 is in Delivery's response cache before the update.
	a1Path := fmt.Sprintf("/delivery/api/branches/4/objects/%d", a1)
	reader.must(http.StatusOK, http.MethodGet, a1Path, "")
	reader.must(http.StatusOK, http.MethodGet, a1Path, "")
	upd := admin.must(http.StatusOK, http.MethodPatch, "/apis/cms/v1/branches/4/objects",
		fmt.Sprintf(`{"objects":[{"meta":{"id":%d,"typeRef":%d},"values":[%s]}]}`, a1, typeA, v(1000, 201, "a1 again")))
	var u write
	_ = json.Unmarshal(upd.body, &u)
	beats := 0
	for ev := range updates.events {
		if strings.HasPrefix(ev.comment, "heartbeat ") {
			beats++
			continue
		}
		if ev.comment != "" || ev.event == "" {
			continue
		}
		if ev.event != "updated" || ev.id != strconv.FormatInt(u.Transaction.ID, 10) {
			t.Fatalf("kinds=updated: got %+v, want the update %d", ev, u.Transaction.ID)
		}
		// Released after the cache eviction: a re-fetch without
		// X-Cms-Min-Version sees the update, never the cached answer.
		if got := reader.must(http.StatusOK, http.MethodGet, a1Path, ""); !strings.Contains(string(got.body), "a1 again") {
			t.Fatalf("a re-fetch on the update event got the old answer: %s", got.body)
		}
		break
	}
	if beats == 0 {
		t.Error("no heartbeat on a stream idle for more than two seconds (heartbeat 300ms)")
	}

	// CORS: a page of an allowed origin may send Authorization and
	// Last-Event-ID.
	pre, _ := http.NewRequest(http.MethodOptions, deliv+changes, nil)
	pre.Header.Set("Origin", "http://page.test")
	pre.Header.Set("Access-Control-Request-Method", "GET")
	pre.Header.Set("Access-Control-Request-Headers", "authorization,last-event-id")
	resp, err := http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	if resp.StatusCode != http.StatusNoContent || !strings.Contains(allowed, "authorization") || !strings.Contains(allowed, "last-event-id") {
		t.Errorf("preflight: %d, allow headers %q", resp.StatusCode, allowed)
	}

	runLiveGRPC(t, grpcAddr, typeA, v1, v4, []int64{v5, v6, u.Transaction.ID}, newObject)
}

// runLiveGRPC: the same stream over gRPC. after are the versions of the
// type A changes after version since, tooOld a version no longer retained.
func runLiveGRPC(t *testing.T, addr string, typeA, tooOld, since int64, after []int64, newObject func(int64, string) (int64, int64)) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := deliveryv1.NewDeliveryServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Basic YWRtaW46dGVzdC1wYXNzd29yZA==")
	recv := func(s grpc.ServerStreamingClient[deliveryv1.ChangeEvent]) *deliveryv1.ChangeEvent {
		t.Helper()
		for {
			ev, err := s.Recv()
			if err != nil {
				t.Fatalf("recv: %v", err)
			}
			if ev.GetKind() != "heartbeat" {
				return ev
			}
		}
	}
	refused := func(ctx context.Context, req *deliveryv1.WatchChangesRequest, want codes.Code) {
		t.Helper()
		s, err := client.WatchChanges(ctx, req)
		if err == nil {
			_, err = s.Recv()
		}
		if status.Code(err) != want {
			t.Errorf("WatchChanges(%v) = %v, want %v", req, err, want)
		}
	}
	refused(ctx, &deliveryv1.WatchChangesRequest{Branch: "4"}, codes.Unauthenticated)
	refused(authed, &deliveryv1.WatchChangesRequest{Branch: "4", Kinds: []string{"renamed"}}, codes.InvalidArgument)
	refused(authed, &deliveryv1.WatchChangesRequest{Branch: "4", Types: make([]int64, 101)}, codes.InvalidArgument)
	refused(authed, &deliveryv1.WatchChangesRequest{Branch: "nosuchbranch"}, codes.NotFound)

	s, err := client.WatchChanges(authed, &deliveryv1.WatchChangesRequest{Branch: "4", Types: []int64{typeA}, Since: since})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range after {
		if ev := recv(s); ev.GetVersion() != want || !slices.Equal(ev.GetTypes(), []int64{typeA}) || ev.GetBranch() != 4 ||
			ev.GetUser() != "admin" {
			t.Fatalf("since %d: got %v, want the change at %d", since, ev, want)
		}
	}
	old, err := client.WatchChanges(authed, &deliveryv1.WatchChangesRequest{Branch: "4", Types: []int64{typeA}, Since: tooOld})
	if err != nil {
		t.Fatal(err)
	}
	if ev := recv(old); ev.GetKind() != "reset" || ev.GetVersion() < after[len(after)-1] {
		t.Fatalf("since %d: got %v, want a reset", tooOld, ev)
	}
	id, version := newObject(typeA, "a7")
	for _, st := range []grpc.ServerStreamingClient[deliveryv1.ChangeEvent]{s, old} {
		if ev := recv(st); ev.GetVersion() != version || ev.GetKind() != "created" || !slices.Equal(ev.GetObjectIds(), []int64{id}) {
			t.Fatalf("got %v, want the creation of %d at %d", ev, id, version)
		}
	}
	// Idle for more than the heartbeat (300 ms): a heartbeat naming the
	// version the stream stands at.
	if ev, err := s.Recv(); err != nil || ev.GetKind() != "heartbeat" || ev.GetVersion() != version {
		t.Fatalf("idle stream: %v, %v; want a heartbeat at %d", ev, err, version)
	}
}

// TestLiveChangesFull: beyond live.maxSubscribers a subscription is
// refused with 503 and Retry-After over HTTP, Unavailable with
// retry-after over gRPC; a closed stream frees its slot.
func TestLiveChangesFull(t *testing.T) {
	testenv.CheckGoroutines(t) // a refused or closed stream leaves nothing running
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	cfg.Live.MaxSubscribers = 1
	srv := startConfigured(t, cfg)
	base := "http://" + srv.HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	w := admin.create(obj(0, "fullType", v(1000, 201, "Full")))
	admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/objects?take=1", "",
		"X-Cms-Min-Version", strconv.FormatInt(w.Transaction.ID, 10), "X-Cms-Max-Wait", "30s")
	const path = "/delivery/api/branches/4/changes"
	first := openSSE(t, base, path, "admin", "test-password", http.StatusOK)
	second := openSSE(t, base, path, "admin", "test-password", http.StatusServiceUnavailable)
	if len(second.resp.Header.Values("Retry-After")) != 1 || !strings.HasPrefix(second.resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("full: headers %v", second.resp.Header)
	}
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Basic YWRtaW46dGVzdC1wYXNzd29yZA==")
	var header metadata.MD
	s, err := deliveryv1.NewDeliveryServiceClient(conn).WatchChanges(ctx, &deliveryv1.WatchChangesRequest{Branch: "4"}, grpc.Header(&header))
	if err == nil {
		_, err = s.Recv()
	}
	if status.Code(err) != codes.Unavailable || len(header.Get("retry-after")) == 0 {
		t.Errorf("gRPC when full: %v, header %v; want Unavailable with retry-after", err, header)
	}
	first.close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := request(t, base, route{method: http.MethodGet, path: path}, true)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed stream's slot was not freed: %d %s", resp.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLiveChangesEndOnShutdown: a stopping server ends its change streams
// at once (clients resume elsewhere) instead of waiting for them until
// the shutdown timeout.
func TestLiveChangesEndOnShutdown(t *testing.T) {
	testenv.CheckGoroutines(t) // the stopped server's streams end with it
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr, cfg.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.AdminPassword = "test-password"
	cfg.ShutdownTimeout = 30 * time.Second
	srv, _, stop := startLoggedStop(t, cfg)
	base := "http://" + srv.HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	w := admin.create(obj(0, "stopType", v(1000, 201, "Stop")))
	admin.must(http.StatusOK, http.MethodGet, "/delivery/api/branches/4/objects?take=1", "",
		"X-Cms-Min-Version", strconv.FormatInt(w.Transaction.ID, 10), "X-Cms-Max-Wait", "30s")
	s := openSSE(t, base, "/delivery/api/branches/4/changes", "admin", "test-password", http.StatusOK)
	start := time.Now()
	stop()
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("shutdown took %v with a change stream open", d)
	}
	select {
	case _, ok := <-s.events:
		for ok {
			_, ok = <-s.events
		}
	case <-time.After(5 * time.Second):
		t.Error("the stream did not end")
	}
}
