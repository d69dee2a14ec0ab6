package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/testenv"
	indexv1 "github.com/cmsplatform/cms/proto/gen/go/cms/index/v1"
	managementv1 "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Hostile search texts (Reliability II, item 2): a multi-MB fullText,
// searchPhrase, suggestions pattern or matchStrings query, sent by a plain
// reader, is a fast 400 (InvalidArgument over gRPC) and costs no memory to
// speak of; once, a 3 MB fullText cost 4 GB and a minute. The bounds are
// generous for a loaded CI box and far below what a capless query costs.
const (
	phraseAnswerTime  = 3 * time.Second
	phraseHeapGrowth  = 64 << 20  // retained after the requests, after GC
	phrasePeakGrowth  = 256 << 20 // heap in use at any time during them
	phraseReaderLogin = "phrase-reader"
)

// wordy is a text of about n bytes of distinct words ("w0 w1 w2 …").
func wordy(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString("w")
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(' ')
	}
	return b.String()
}

// procStatusKB reads a "VmRSS"/"VmHWM" line of /proc/self/status in kB (0
// where there is none).
func procStatusKB(key string) int64 {
	n, _ := testenv.ProcStatus(0, key)
	return n >> 10
}

// heapWatch samples the heap in use until stopped and returns its peak.
func heapWatch() (stop func() uint64) {
	var peak atomic.Uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak.Load() }
}

func heapInuse() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func basicMD(ctx context.Context, user, pass string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
}

// TestHostilePhrases sends a 3 MB fullText over HTTP and a 2 MB one over
// gRPC (and multi-MB texts to every other capped field) as a reader of
// branch 4, and reports and bounds the time and memory they cost.
func TestHostilePhrases(t *testing.T) {
	srv, _ := edgeServerGRPC(t, hostileEdge)
	base := "http://" + srv.HTTPAddr()
	admin := httpClient{t, base, "admin", "test-password"}
	admin.create(obj(110, "", v(1100, 0, phraseReaderLogin), v(1000, 201, "Phrase reader"), v(1101, 0, "reader-pw"), v(1104, 0, 4)))
	reader := httpClient{t, base, phraseReaderLogin, "reader-pw"}
	reader.must(http.StatusOK, http.MethodPost, "/apis/index/v1/branches/4/objects", `{"filter":{"fullText":"ledger"}}`)
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	text3, text2 := wordy(3_000_000), wordy(2_000_000)
	body := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
	httpCases := []struct{ name, path, body string }{
		{"3 MB filter.fullText", "/apis/index/v1/branches/4/objects", body(map[string]any{"filter": map[string]any{"fullText": text3}})},
		{"3 MB filter.searchPhrase", "/apis/index/v1/branches/4/objectCount", body(map[string]any{"filter": map[string]any{"searchPhrase": text3}})},
		{"3 MB suggestions pattern", "/apis/index/v1/branches/4/suggestions", body(map[string]any{"pattern": text3, "fullText": true})},
		{"3 MB matchStrings query", "/apis/index/v1/utilities/matchStrings", body(map[string]any{"query": text3, "strings": []string{"a"}})},
		{"3 MB comment searchPhrase", "/apis/index/v1/branches/4/comments", body(map[string]any{"filter": map[string]any{"searchPhrase": text3}})},
	}

	before, rssBefore := heapInuse(), procStatusKB("VmRSS")
	stop := heapWatch()
	var httpTook, grpcTook time.Duration
	for i, c := range httpCases {
		start := time.Now()
		r := reader.do(http.MethodPost, c.path, c.body)
		took := time.Since(start)
		if i == 0 {
			httpTook = took
		}
		if r.code != http.StatusBadRequest || !strings.Contains(string(r.body), "4096") || took > phraseAnswerTime {
			t.Errorf("%s over HTTP: %d in %v (want a 400 naming the 4096-byte cap within %v): %.300s", c.name, r.code, took, phraseAnswerTime, r.body)
		}
		if took > phraseAnswerTime {
			break // uncapped: each would cost as much again
		}
	}
	ctx, cancel := context.WithTimeout(basicMD(context.Background(), phraseReaderLogin, "reader-pw"), 2*time.Minute)
	defer cancel()
	start := time.Now()
	err = conn.Invoke(ctx, "/cms.index.v1.IndexService/ObjectSearch",
		&indexv1.ObjectSearchRequest{Branch: "4", Filter: &indexv1.ObjectFilterCondition{FullText: &text2}}, new(indexv1.ObjectSearchResult))
	grpcTook = time.Since(start)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "4096") || grpcTook > phraseAnswerTime {
		t.Errorf("2 MB fullText over gRPC: %v in %v (want InvalidArgument naming the cap within %v)", err, grpcTook, phraseAnswerTime)
	}
	peak := stop()
	after, rssAfter := heapInuse(), procStatusKB("VmRSS")
	t.Logf("3 MB fullText over HTTP: %v; 2 MB fullText over gRPC: %v; RSS %d MB before, %d MB after, peak %d MB (VmHWM); heap in use %d MB before, %d MB after, peak %d MB",
		httpTook.Round(time.Millisecond), grpcTook.Round(time.Millisecond), rssBefore>>10, rssAfter>>10, procStatusKB("VmHWM")>>10,
		before>>20, after>>20, peak>>20)
	if growth := int64(after) - int64(before); growth > phraseHeapGrowth {
		t.Errorf("the heap grew by %d MiB over the requests, bound %d MiB", growth>>20, phraseHeapGrowth>>20)
	}
	if growth := int64(peak) - int64(before); growth > phrasePeakGrowth {
		t.Errorf("the heap peaked %d MiB above its start during the requests, bound %d MiB", growth>>20, phrasePeakGrowth>>20)
	}
}

// TestGRPCReceiveLimits: every group's gRPC port takes a request message
// of at most the HTTP body limit (edge.maxBodyBytes), and an upload stream
// at most the HTTP upload limit (maxUploadBytes) together.
// A body limit below one upload chunk is held per operation by the
// interceptor (interceptors.RecvLimits), a larger one by the server itself.
func TestGRPCReceiveLimits(t *testing.T) {
	for _, body := range []int{1 << 20, 128 << 10} {
		t.Run(strconv.Itoa(body), func(t *testing.T) { grpcReceiveLimits(t, body) })
	}
}

func grpcReceiveLimits(t *testing.T, body int) {
	const upload = 3 << 20
	srv, _ := edgeServerGRPC(t, func(c *Config) { c.Edge.MaxBodyBytes, c.MaxUploadBytes = int64(body), upload })
	conn, err := grpc.NewClient(srv.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := basicMD(context.Background(), "admin", "test-password")
	// A message of n bytes whose field 1 (length-delimited) every request
	// below can hold; its decoding, or the call, may fail otherwise, but
	// only an oversized one is ResourceExhausted.
	msg := func(n int) proto.Message {
		return wrapperspb.String(strings.Repeat("x", n-4)) // tag and 3-byte length
	}
	for _, m := range []string{
		"/cms.management.v1.ManagementService/GetBranches",
		"/cms.delivery.v1.DeliveryService/GetBranches",
		"/cms.rendering.v1.RenderingService/GetBinary",
		"/cms.index.v1.IndexService/MatchStrings",
	} {
		for _, n := range []int{body - 1024, body + 1024} {
			if got := proto.Size(msg(n)); got != n {
				t.Fatalf("message of %d bytes is %d", n, got)
			}
			var err error
			if strings.Contains(m, "RenderingService") {
				var s grpc.ClientStream
				if s, err = conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, m); err == nil {
					if err = s.SendMsg(msg(n)); err == nil {
						_ = s.CloseSend()
						err = s.RecvMsg(new(wrapperspb.BytesValue))
					}
				}
			} else {
				err = conn.Invoke(ctx, m, msg(n), new(wrapperspb.BytesValue))
			}
			if tooLarge := status.Code(err) == codes.ResourceExhausted; tooLarge != (n > body) {
				t.Errorf("%s with a %d-byte message (limit %d): %v", m, n, body, err)
			}
		}
	}
	// An upload stream of more than maxUploadBytes in chunks of 256 KiB.
	var desc grpc.StreamDesc
	for _, sd := range managementv1.ManagementService_ServiceDesc.Streams {
		if sd.StreamName == "StartUpload" {
			desc = sd
		}
	}
	for _, total := range []int{upload - 1<<20, upload + 1<<20} {
		s, err := conn.NewStream(ctx, &desc, "/cms.management.v1.ManagementService/StartUpload")
		if err != nil {
			t.Fatal(err)
		}
		ext := "bin"
		err = s.SendMsg(&managementv1.StartUploadRequest{Part: &managementv1.StartUploadRequest_Header{Header: &managementv1.StartUploadHeader{Extension: &ext}}})
		chunk := make([]byte, 256<<10)
		for sent := 0; err == nil && sent < total; sent += len(chunk) {
			err = s.SendMsg(&managementv1.StartUploadRequest{Part: &managementv1.StartUploadRequest_Chunk{Chunk: &managementv1.UploadChunk{Data: chunk}}})
		}
		if err == nil {
			_ = s.CloseSend()
		}
		// A refused stream ends early (SendMsg io.EOF): its status is here.
		err = s.RecvMsg(new(managementv1.FileUploadResult))
		if tooLarge := status.Code(err) == codes.ResourceExhausted; tooLarge != (total > upload) {
			t.Errorf("upload stream of %d bytes (limit %d): %v", total, upload, err)
		}
	}
}
