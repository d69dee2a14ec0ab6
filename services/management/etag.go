package management

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/cmsplatform/cms/pkg/content"
	"github.com/cmsplatform/cms/services/internal/gateway"
	"google.golang.org/protobuf/proto"
)

// etagOf is a strong validator of a response: the first 16 bytes of the
// SHA-256 of its deterministic protobuf encoding followed by versions,
// base64url (22 characters, like Delivery's meta.etag), quoted. It changes
// whenever any returned field changes, inherited values and paging tokens
// included, and whenever a version changes.
//
// Objects pass their content.Object.Version: meta.lastTransaction counts
// local changes only, so on a child branch a change inherited from an
// ancestor leaves it alone; the version moves with every change along the
// chain, so the ETag does too (also for changes to values the projection
// leaves out, a harmless extra miss).
func etagOf(m proto.Message, versions ...int64) string {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return ""
	}
	for _, v := range versions {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// objectVersions returns the versions of objs for etagOf.
func objectVersions(objs ...content.Object) []int64 {
	out := make([]int64, len(objs))
	for i, o := range objs {
		out[i] = o.Version
	}
	return out
}

// conditional sets the ETag of resp (mixing in versions, see etagOf) and
// returns gateway.NotModified when the request's If-None-Match names it (or is
// "*"), else resp.
func conditional[T proto.Message](ctx context.Context, resp T, versions ...int64) (T, error) {
	if err := gateway.Conditional(ctx, etagOf(resp, versions...)); err != nil {
		var zero T
		return zero, err
	}
	return resp, nil
}

// conditionalAt is conditional for a read at a past transaction (asOf >
// 0), which answers without a validator: Version orders the present, not
// the past.
func conditionalAt[T proto.Message](ctx context.Context, resp T, asOf int64, versions ...int64) (T, error) {
	if asOf != 0 {
		return resp, nil
	}
	return conditional(ctx, resp, versions...)
}
