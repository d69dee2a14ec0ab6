// Package responsecache is the Delivery group's response cache: rendered
// answers keyed by the normalized request, tagged with what they were built
// from, evicted by the change events that touch those tags, and validated
// with strong ETags.
//
// Its interface, as the Delivery transport uses it:
//
//   - Serve answers one read: from the cache when an entry built at or
//     after the caller's minimum index version exists, otherwise by
//     building it. Identical misses that run at the same time are built
//     once (see flight.go): the others wait for that build and share its
//     answer. A failed build is never stored, and its error is shared
//     only with the callers that waited for it; a build that failed
//     because its caller went away is retried by the others.
//   - Every answer carries its ETag (pkg/etag.Of: a hash of the operation,
//     the body and the tags); the transport answers 304 when If-None-Match
//     matches (pkg/etag.Matches) and sends CacheControl.
//   - Answers are stored in a pkg/tagcache.Store, fenced at the index
//     version read before the build (tagcache.IndexFence), so an eviction
//     that happened meanwhile is not undone by an answer rendered from
//     older data.
//   - HTTP (http.go) keeps the final HTTP answers of the same reads in
//     front of the gateway, under the same tags and fences.
//   - Invalidator (invalidator.go) is the tagcache.Invalidator that
//     consumes change events and evicts the tags each one makes stale.
//   - Stats (stats.go) count hits, misses, shared builds and evictions.
//
// The storage is the one cache interface, pkg/cache, chosen by the app
// (memory or Redis).
package responsecache

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"strings"

	"github.com/cmsplatform/cms/pkg/cache"
	"github.com/cmsplatform/cms/pkg/etag"
	"github.com/cmsplatform/cms/pkg/tagcache"
	"google.golang.org/protobuf/proto"
)

// CacheControl is sent with every answer: browsers and CDNs may keep the
// body but must revalidate every use, which costs a 304 from this cache.
// Content therefore never looks stale longer than our own eviction takes
// (one change event), and a CDN never serves a body it did not revalidate
// with the caller's credentials.
const CacheControl = "public, max-age=0, must-revalidate"

// Cache is the response cache. A nil *Cache, or one without storage,
// caches nothing: Serve always builds. Its methods are safe for
// concurrent use.
type Cache struct {
	store   *tagcache.Store
	flights flights
	stats   counters
	// run runs the build of a miss (WithRun); nil: on the caller.
	run func(context.Context, func(context.Context))
}

// WithRun makes the cache run the build of every miss (the version read
// and build) with run (the transport's gate of uncached reads,
// pkg/delivery.ReadPool.Run), which returns when the build did: the
// misses of every caller, and every build of a cache without storage,
// pass the same gate. It returns c.
func (c *Cache) WithRun(run func(context.Context, func(context.Context))) *Cache {
	c.run = run
	return c
}

// New returns a response cache storing in c (nil: nothing is cached, but
// identical concurrent builds are still shared). log nil discards.
func New(c cache.Cache, log *slog.Logger) *Cache {
	return &Cache{store: tagcache.NewStore(c, "responsecache", log)}
}

// Enabled reports whether answers are stored.
func (c *Cache) Enabled() bool { return c != nil && c.store.Enabled() }

// Storage returns the underlying cache (nil when disabled).
func (c *Cache) Storage() cache.Cache {
	if c == nil {
		return nil
	}
	return c.store.Storage()
}

// Build renders one answer in ctx (Serve's): the response and the cache
// tags of what it was built from.
type Build[T proto.Message] func(ctx context.Context) (T, []string, error)

// Index is what answers are built from: Version is its change-tracking
// version (pkg/delivery.Service).
type Index interface {
	Version(ctx context.Context) (int64, error)
}

// Serve answers the read op with request req (its deterministic encoding
// is the cache key, Key) for a caller that needs index version minVersion
// or newer (0: any). A cached answer built at or after minVersion is
// returned as it is; otherwise the index's version is read (the version
// the build will see at least) and build runs once for all identical
// concurrent misses, and its answer is stored with its tags, fenced at
// that version (with WithRun, the version read and build run with its
// run). It returns the answer and its ETag. Errors are those of the
// version read and of build (and of encoding the answer).
func Serve[T proto.Message](ctx context.Context, c *Cache, op string, req proto.Message, minVersion int64,
	index Index, build Build[T]) (T, string, error) {
	var zero T
	if c == nil {
		c = New(nil, nil)
	}
	key := Key(op, req)
	if e, ok := c.store.Get(ctx, key, minVersion); ok {
		out := zero.ProtoReflect().New().Interface().(T)
		if proto.Unmarshal(e.Body, out) == nil {
			c.store.Hit()
			return out, e.ETag, nil
		}
	}
	c.store.Miss()
	// mine is the answer when this caller built it: no decoding needed.
	var mine T
	miss := func(ctx context.Context) (rendering, error) {
		builtAt, err := index.Version(ctx)
		if err != nil {
			return rendering{}, err
		}
		out, tags, err := build(ctx)
		if err != nil {
			return rendering{}, err
		}
		frame, b, err := encode(c.Enabled(), out)
		if err != nil {
			return rendering{}, err
		}
		mine = out
		r := rendering{frame: frame, body: b, tags: tags, builtAt: builtAt, etag: etag.Of(op, b, tags)}
		c.put(ctx, key, r)
		return r, nil
	}
	r, shared, err := c.flights.do(ctx, key, minVersion, func() (rendering, error) {
		if c.run == nil {
			return miss(ctx)
		}
		var r rendering
		var err error
		c.run(ctx, func(ctx context.Context) { r, err = miss(ctx) })
		return r, err
	})
	if err != nil {
		return zero, "", err
	}
	if !shared {
		return mine, r.etag, nil
	}
	c.stats.shared.Add(1)
	out := zero.ProtoReflect().New().Interface().(T)
	if err := proto.Unmarshal(r.body, out); err != nil {
		return zero, "", err
	}
	return out, r.etag, nil
}

// encode returns the deterministic encoding of out (body) and, when the
// answer is stored, the frame holding it: the encoding is written into
// the frame the cache keeps, one copy. Without storage an answer made of
// unknown fields alone (the wire JSON gateway.WithWireJSON carries) is its
// own encoding: body is those bytes, not a copy (the answer is not
// changed after its build).
func encode(stored bool, out proto.Message) (frame, body []byte, err error) {
	o := proto.MarshalOptions{Deterministic: true}
	n := o.Size(out)
	if !stored {
		if raw := out.ProtoReflect().GetUnknown(); len(raw) > 0 && len(raw) == n {
			return nil, raw, nil
		}
		body, err = o.Marshal(out)
		return nil, body, err
	}
	o.UseCachedSize = true
	frame, err = o.MarshalAppend(tagcache.NewFrame(n), out)
	if err != nil {
		return nil, nil, err
	}
	return frame, tagcache.FrameBody(frame), nil
}

// rendering is one built answer as stored.
type rendering struct {
	frame   []byte // tagcache.NewFrame holding body, kept by the cache
	body    []byte // deterministic encoding of the response
	tags    []string
	builtAt int64 // index version read before the build
	etag    string
}

// put stores r under key, and its tags and version under its ETag (for
// the HTTP layer, metaKey).
func (c *Cache) put(ctx context.Context, key string, r rendering) {
	if !c.Enabled() {
		return
	}
	c.store.PutFramed(ctx, key, r.frame, r.etag, r.builtAt, r.tags)
	c.store.Put(ctx, metaKey(r.etag), tagcache.Entry{Body: []byte(strings.Join(r.tags, "\n")), ETag: r.etag, At: r.builtAt}, r.tags)
}

// Key is the normalized query: the operation and the request's
// deterministic encoding (parameter order and spelling on the URL do not
// matter), hashed.
func Key(op string, req proto.Message) string {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	h := sha256.New()
	h.Write([]byte(op + "\x00"))
	h.Write(b)
	return "delivery:" + op + ":" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// metaKey names the entry that records, for one ETag, the cache tags and
// the index version of a rendering (read by the HTTP layer).
func metaKey(etag string) string { return "delivery:meta:" + strings.Trim(etag, `"`) }
