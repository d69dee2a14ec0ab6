package elastic

import (
	"errors"
	"testing"

	"github.com/cmsplatform/cms/pkg/search"
)

func TestUnavailableStatusesMatchErrUnavailable(t *testing.T) {
	if !errors.Is(&esError{Status: 503, Type: "search_phase_execution_exception"}, search.ErrUnavailable) {
		t.Fatal("a 503 is not ErrUnavailable")
	}
	if errors.Is(&esError{Status: 400}, search.ErrUnavailable) {
		t.Fatal("a 400 is ErrUnavailable")
	}
}
