package delivery

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cmsplatform/cms/pkg/content"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ChangesPath is the server-sent events route of WatchChanges.
const ChangesPath = BasePath + "/branches/{branch}/changes"

// sseRetry is the reconnection delay the stream asks EventSource for.
const sseRetry = 2 * time.Second

// sseChange is the data of one change event.
type sseChange struct {
	Version   int64   `json:"version"`
	Kind      string  `json:"kind"`
	Branch    int64   `json:"branch"`
	ObjectIDs []int64 `json:"objectIds"`
	Types     []int64 `json:"types"`
	User      string  `json:"user"`
}

// registerChangesSSE serves ChangesPath as server-sent events in place of
// grpc-gateway's JSON stream (registered later, so it wins): it opens the
// WatchChanges stream through the gateway's connection (the interceptors
// authenticate and authorize it like every call) and writes each message
// as an event: id = version, event = kind, data = sseChange; a reset as
// event "reset" with data {version}; a heartbeat as a comment. Errors
// before the stream starts are ProblemDetails (401, 403, 404, 400, 503 +
// Retry-After); after it, the stream just ends and EventSource resumes
// with Last-Event-ID.
func registerChangesSSE(mux *runtime.ServeMux, client deliveryv1.DeliveryServiceClient) error {
	query := utilities.NewDoubleArray([][]string{{"branch"}})
	return mux.HandlePath(http.MethodGet, ChangesPath, func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		fail := func(ctx context.Context, err error) { gateway.ErrorHandler(ctx, mux, gateway.WireJSON{}, w, r, err) }
		req := &deliveryv1.WatchChangesRequest{Branch: params["branch"]}
		if err := runtime.PopulateQueryParameters(req, listsSplit(r.URL.Query()), query); err != nil {
			fail(r.Context(), status.Error(codes.InvalidArgument, err.Error()))
			return
		}
		ctx, err := runtime.AnnotateContext(r.Context(), mux, r, deliveryv1.DeliveryService_WatchChanges_FullMethodName,
			runtime.WithHTTPPathPattern(ChangesPath))
		if err != nil {
			fail(r.Context(), err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := client.WatchChanges(ctx, req)
		if err != nil {
			fail(ctx, err)
			return
		}
		header, err := stream.Header()
		if err != nil || len(header.Get(HeaderChangeVersion)) == 0 {
			// Refused before it started (a trailers-only answer has no
			// HeaderChangeVersion): the status is what Recv returns.
			_, err = stream.Recv()
			md := header // a trailers-only answer: the trailer, also given as the header
			if len(md) == 0 {
				md = stream.Trailer()
			}
			fail(runtime.NewServerMetadataContext(ctx, runtime.ServerMetadata{HeaderMD: md}), err)
			return
		}
		es := gateway.StartEventStream(w)
		if es.Retry(sseRetry) != nil {
			return
		}
		for {
			ev, err := stream.Recv()
			if err != nil {
				return // EventSource reconnects with the last id
			}
			if writeChange(es, ev) != nil {
				return
			}
		}
	})
}

// listsSplit lets types and kinds be given comma-separated
// (types=1200,1201) as well as repeated (types=1200&types=1201).
func listsSplit(q url.Values) url.Values {
	for _, k := range []string{"types", "kinds"} {
		var out []string
		for _, v := range q[k] {
			out = append(out, content.SplitIdents(v)...)
		}
		if _, ok := q[k]; ok {
			q[k] = out
		}
	}
	return q
}

func writeChange(es *gateway.EventStream, ev *deliveryv1.ChangeEvent) error {
	id := strconv.FormatInt(ev.GetVersion(), 10)
	switch ev.GetKind() {
	case KindHeartbeat:
		return es.Comment(KindHeartbeat + " " + id)
	case KindReset:
		data, _ := json.Marshal(struct {
			Version int64 `json:"version"`
		}{ev.GetVersion()})
		return es.Event(id, KindReset, data)
	}
	c := sseChange{Version: ev.GetVersion(), Kind: ev.GetKind(), Branch: ev.GetBranch(),
		ObjectIDs: ev.GetObjectIds(), Types: ev.GetTypes(), User: ev.GetUser()}
	if c.ObjectIDs == nil {
		c.ObjectIDs = []int64{}
	}
	if c.Types == nil {
		c.Types = []int64{}
	}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return es.Event(id, c.Kind, data)
}
