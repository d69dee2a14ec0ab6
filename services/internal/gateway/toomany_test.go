package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/cmsplatform/cms/pkg/fairshare"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A per-user cap (errkind.TooMany) is 429 with a ProblemDetails of type
// too-many-requests whose limit member names the cap, through the one
// mapping every group uses.
func TestTooManyIsMappedOnce(t *testing.T) {
	err := fmt.Errorf("render: %w", &fairshare.LimitError{Cap: "renderSlotsPerUser", Limit: 4, What: "renders running", After: 2 * time.Second})
	st := status.Convert(DomainStatus(context.Background(), slog.New(slog.DiscardHandler), "test", err))
	p := ProblemOf(st, "/x")
	if st.Code() != codes.ResourceExhausted || HTTPStatus(st) != http.StatusTooManyRequests || p.Status != 429 ||
		p.Limit != "renderSlotsPerUser" || p.Reason != ReasonTooManyRequests || p.Type != problemTypeBase+"too-many-requests" {
		t.Fatalf("status %v, problem %+v", st, p)
	}
}
