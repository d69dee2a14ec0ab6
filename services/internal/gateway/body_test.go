package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func limitedRequest(body string, limits BodyLimits) (*httptest.ResponseRecorder, *http.Request) {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/apis/cms/v1/branches", strings.NewReader(body))
	LimitBody(w, r, limits)
	return w, r
}

func TestLimitBodyStopsAtTheLimit(t *testing.T) {
	_, r := limitedRequest(strings.Repeat("a", 10), BodyLimits{MaxBytes: 10})
	if b, err := io.ReadAll(r.Body); err != nil || len(b) != 10 {
		t.Fatalf("at the limit: %d bytes, %v", len(b), err)
	}
	if _, over := BodyTooLarge(r); over {
		t.Fatal("a body at the limit counts as too large")
	}
	w, r := limitedRequest(strings.Repeat("a", 1<<20), BodyLimits{MaxBytes: 10})
	b, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) || len(b) != 10 {
		t.Fatalf("over the limit: %d bytes, %v", len(b), err)
	}
	if limit, over := BodyTooLarge(r); !over || limit != 10 {
		t.Fatalf("BodyTooLarge = %d %v", limit, over)
	}
	if w.Header().Get("Connection") != "close" {
		t.Fatal("the connection of an oversized body is kept")
	}
}

func TestLimitBodyJSONDepth(t *testing.T) {
	for _, c := range []struct {
		name, body string
		deep       bool
	}{
		{"64 levels", strings.Repeat("[", 64) + strings.Repeat("]", 64), false},
		{"65 levels", strings.Repeat("[", 65) + strings.Repeat("]", 65), true},
		{"5000 levels", strings.Repeat("[", 5000), true},
		{"objects count", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), true},
		{"brackets in strings do not", `{"v":"` + strings.Repeat("[", 100) + `\"[[["}`, false},
		{"siblings do not add up", strings.Repeat("[[]]", 1000), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, r := limitedRequest(c.body, BodyLimits{MaxBytes: 1 << 20, MaxDepth: 64})
			_, err := io.ReadAll(r.Body)
			if got := errors.Is(err, ErrJSONTooDeep); got != c.deep {
				t.Fatalf("too deep = %v (%v), want %v", got, err, c.deep)
			}
		})
	}
}

func TestRaiseBodyLimitForUploads(t *testing.T) {
	w, r := limitedRequest(strings.Repeat("[", 100), BodyLimits{MaxBytes: 10, MaxDepth: 2})
	if !RaiseBodyLimit(w, r, 100) {
		t.Fatal("RaiseBodyLimit did not find the limited body")
	}
	if b, err := io.ReadAll(r.Body); err != nil || len(b) != 100 {
		t.Fatalf("raised: %d bytes, %v", len(b), err)
	}
	plain := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x"))
	if RaiseBodyLimit(httptest.NewRecorder(), plain, 100) {
		t.Fatal("RaiseBodyLimit claims a body LimitBody never saw")
	}
}

func TestOversizedBodiesAnswer413(t *testing.T) {
	w, r := limitedRequest(strings.Repeat("a", 100), BodyLimits{MaxBytes: 10})
	w.Header().Set(HeaderRequestID, "req-1")
	_, err := io.ReadAll(r.Body)
	// What the generated code makes of any decode error.
	ErrorHandler(context.Background(), nil, WireJSON{}, w, r, status.Errorf(codes.InvalidArgument, "%v", err))
	var p Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if w.Code != 413 || p.Status != 413 || p.Reason != ReasonPayloadTooLarge || !strings.Contains(p.Detail, "10 bytes") || p.RequestID != "req-1" {
		t.Fatalf("%d %+v", w.Code, p)
	}
}

func TestGRPCMessageSizeIs413Not429(t *testing.T) {
	for msg, want := range map[string]int{
		"grpc: received message larger than max (20000000 vs. 16777216)": 413,
		"grpc: trying to send message larger than max (5 vs. 4)":         413,
		"quota exhausted": 429,
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/apis/cms/v1/branches", nil)
		ErrorHandler(context.Background(), nil, WireJSON{}, w, r, status.Error(codes.ResourceExhausted, msg))
		if w.Code != want || (want == 413 && strings.Contains(w.Body.String(), "grpc:")) {
			t.Errorf("%q: %d %s, want %d without gRPC text", msg, w.Code, w.Body, want)
		}
	}
}

func TestServerFaultsAreRecordedForTheLog(t *testing.T) {
	ctx, fault := WithFault(context.Background())
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/apis/cms/v1/branches", nil).WithContext(ctx)
	ErrorHandler(ctx, nil, WireJSON{}, w, r, errors.New("disk on fire"))
	if w.Code != 500 || !strings.Contains(fault.Cause, "disk on fire") || strings.Contains(w.Body.String(), "disk on fire") {
		t.Fatalf("%d %s, fault %q", w.Code, w.Body, fault.Cause)
	}
}
