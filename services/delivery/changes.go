package delivery

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/errkind"
	"github.com/cmsplatform/cms/pkg/livechanges"
	deliveryv1 "github.com/cmsplatform/cms/proto/gen/go/cms/delivery/v1"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The change stream (WatchChanges; over HTTP the server-sent events of
// changes_sse.go). The hub (pkg/livechanges) decides what a subscriber
// gets; this file translates its subscription into stream messages:
//
//   - a resume position older than the retained changes is not an error:
//     the stream starts with a KindReset message whose version the client
//     resumes after, once it has reloaded its data;
//   - while nothing else was sent for Heartbeat, a KindHeartbeat message
//     keeps intermediaries from closing the idle connection;
//   - a full hub, or one not ready within SubscribeWait, is Unavailable
//     with Retry-After; a caller at its own cap (the hub's
//     MaxSubscribersPerUser) is 429 with Retry-After; a subscriber too slow to take its events is ended
//     Unavailable (resume with the last version seen).
const (
	KindReset     = "reset"
	KindHeartbeat = "heartbeat"
	// HeaderLastEventID overrides since (an EventSource reconnecting
	// sends the id of the last event it received).
	HeaderLastEventID = "last-event-id"
	// HeaderChangeVersion, sent when the stream starts, is the version it
	// continues after.
	HeaderChangeVersion = "x-cms-change-version"
	// DefaultHeartbeat is the default of LiveOptions.Heartbeat.
	DefaultHeartbeat = 15 * time.Second
	// SubscribeWait bounds the wait for a hub that is not ready yet.
	SubscribeWait = 2 * time.Second
	// retryAfterSeconds is the Retry-After of a refused subscription.
	retryAfterSeconds = "5"
)

// LiveOptions configure the change stream of the group.
type LiveOptions struct {
	// Hub is the configuration of the process's hub; the group fills in
	// its index (Hub.Index).
	Hub livechanges.Config
	// Heartbeat is the idle interval between heartbeats (0: DefaultHeartbeat).
	Heartbeat time.Duration
}

type live struct {
	hub       *livechanges.Hub
	heartbeat time.Duration
}

// LiveChanges returns the hub of the group's change stream, reading the
// index the group reads; run it (Hub.Run) as a worker of the delivery
// target. Without a search engine it returns nil and WatchChanges answers
// Unavailable.
func (g *Group) LiveChanges(opts LiveOptions) *livechanges.Hub {
	if g.api.dom == nil {
		return nil
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	opts.Hub.Index = g.api.dom
	// The stream's events follow the cache's eviction, not only the index:
	// a client that re-fetches on an event must not get the old answer
	// from the response cache while its invalidator still lags.
	opts.Hub.BeforeRelease = g.api.cache.Invalidator(nil, "", g.api.dom).Evict
	g.api.live = &live{hub: livechanges.New(opts.Hub), heartbeat: opts.Heartbeat}
	return g.api.live.hub
}

// CloseStreams ends the change streams (the process is stopping; their
// clients resume elsewhere) and refuses new ones.
func (g *Group) CloseStreams() {
	if g.api.live != nil {
		g.api.live.hub.Close()
	}
}

// WatchChanges implements DeliveryService.
func (s *service) WatchChanges(req *deliveryv1.WatchChangesRequest, stream grpc.ServerStreamingServer[deliveryv1.ChangeEvent]) error {
	ctx := stream.Context()
	if s.live == nil {
		return status.Error(codes.Unavailable, "delivery: the change stream needs a search index")
	}
	since, err := resumePosition(ctx, req.GetSince())
	if err != nil {
		return err
	}
	chain, err := s.chains.BranchChain(ctx, req.GetBranch())
	if err != nil {
		return err
	}
	sub, reset, err := s.live.subscribe(ctx, livechanges.Filter{Branches: chain, Kinds: req.GetKinds(), Types: req.GetTypes()}, since)
	if err != nil {
		return err
	}
	defer sub.Close()
	if err := stream.SendHeader(metadata.Pairs(HeaderChangeVersion, strconv.FormatInt(sub.Start, 10))); err != nil {
		return err
	}
	last := sub.Start
	if reset {
		if err := stream.Send(&deliveryv1.ChangeEvent{Kind: KindReset, Version: last}); err != nil {
			return err
		}
	}
	beat := time.NewTicker(s.live.heartbeat)
	defer beat.Stop()
	for {
		select {
		case c, ok := <-sub.C:
			if !ok {
				return endStatus(sub.Err())
			}
			last = c.Transaction
			if err := stream.Send(&deliveryv1.ChangeEvent{Kind: c.Kind, Version: c.Transaction, Branch: c.Branch,
				ObjectIds: c.ObjectIDs, Types: c.Types, User: c.User}); err != nil {
				return err
			}
			beat.Reset(s.live.heartbeat)
		case <-beat.C:
			if err := stream.Send(&deliveryv1.ChangeEvent{Kind: KindHeartbeat, Version: last}); err != nil {
				return err
			}
		case <-ctx.Done():
			return nil
		}
	}
}

// resumePosition is since, or the Last-Event-ID header when given.
func resumePosition(ctx context.Context, since int64) (int64, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if vs := md.Get(HeaderLastEventID); len(vs) > 0 && strings.TrimSpace(vs[0]) != "" {
		v, err := strconv.ParseInt(strings.TrimSpace(vs[0]), 10, 64)
		if err != nil {
			return 0, status.Errorf(codes.InvalidArgument, "Last-Event-ID must be a change version, got %.40q", vs[0])
		}
		return v, nil
	}
	return since, nil // the hub refuses a negative one
}

// subscribe subscribes after since; a position too old subscribes from
// now and reports reset.
func (l *live) subscribe(ctx context.Context, f livechanges.Filter, since int64) (*livechanges.Subscription, bool, error) {
	wctx, cancel := context.WithTimeout(ctx, SubscribeWait)
	defer cancel()
	sub, err := l.hub.Subscribe(wctx, f, since)
	reset := errors.Is(err, livechanges.ErrPositionTooOld)
	if reset {
		sub, err = l.hub.Subscribe(wctx, f, 0)
	}
	switch {
	case err == nil:
		return sub, reset, nil
	case errkind.Of(err) == errkind.TooMany: // the caller's own cap (429)
		return nil, false, gateway.TooMany(ctx, err)
	case errors.Is(err, livechanges.ErrBadFilter):
		return nil, false, status.Error(codes.InvalidArgument, strings.TrimPrefix(err.Error(), "livechanges: "))
	case ctx.Err() != nil:
		return nil, false, status.FromContextError(ctx.Err()).Err()
	case errors.Is(err, livechanges.ErrTooManySubscribers):
		return nil, false, gateway.RetryAfter(ctx, retryAfterSeconds, codes.Unavailable, "too many change stream subscribers; retry later")
	default: // not ready within SubscribeWait, or stopping
		return nil, false, gateway.RetryAfter(ctx, retryAfterSeconds, codes.Unavailable, "the change stream is not ready; retry shortly")
	}
}

// endStatus is the status of a subscription the hub ended.
func endStatus(err error) error {
	if errors.Is(err, livechanges.ErrSlowSubscriber) {
		return status.Error(codes.Unavailable, "the subscriber did not keep up with its changes; resume after the last version seen")
	}
	return status.Error(codes.Unavailable, "the change stream stopped; resume after the last version seen")
}
