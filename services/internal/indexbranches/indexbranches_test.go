package indexbranches

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestStatusOfResolutionErrors: a branch that is no identifier is
// InvalidArgument (it was Internal: a 500 for "/branches/4.0/…" as any
// non-administrator), an unknown one NotFound, anything else Internal.
func TestStatusOfResolutionErrors(t *testing.T) {
	r := &Resolver{log: slog.New(slog.DiscardHandler)}
	for _, c := range []struct {
		err  error
		want codes.Code
	}{
		{fmt.Errorf("%w: branch: \"4.0\" is neither an id, a GUID nor an ApiIdentifier", indexdoc.ErrBadBranch), codes.InvalidArgument},
		{fmt.Errorf("%w: branch 99", indexdoc.ErrNoBranch), codes.NotFound},
		{errors.New("disk on fire"), codes.Internal},
	} {
		if got := status.Code(r.status(context.Background(), c.err)); got != c.want {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
	}
}
