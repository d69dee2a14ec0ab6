package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/cmsplatform/cms/pkg/errkind"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type fieldErr struct {
	attr        int64
	lang, varnt *int64
	err         error
}

func (e fieldErr) Error() string { return e.err.Error() }
func (e fieldErr) Unwrap() error { return e.err }
func (e fieldErr) ValueField() (int64, *int64, *int64) {
	return e.attr, e.lang, e.varnt
}

// positioned is a fieldErr that knows its row (pkg/content's ValueError with SortReverse).
type positioned struct {
	fieldErr
	row int64
}

func (e positioned) ValuePosition() (int64, bool) { return e.row, true }

var errInvalid = errkind.New(errkind.Invalid, "invalid request")

// An invalid value that names its field is a plain 400 (type about:blank,
// no reason) whose ProblemDetails carries attribute, language and variant;
// one without a language leaves those out, one that knows its row adds
// sortReverse, and other 400s have none.
func TestInvalidValueNamesItsField(t *testing.T) {
	zero, de := int64(0), int64(202)
	problem := func(err error) (Problem, string) {
		st := status.Convert(DomainStatus(context.Background(), slog.New(slog.DiscardHandler), "test", err))
		if st.Code() != codes.InvalidArgument || HTTPStatus(st) != http.StatusBadRequest {
			t.Fatalf("status %v (HTTP %d)", st, HTTPStatus(st))
		}
		p := ProblemOf(st, "/x")
		b, _ := json.Marshal(p)
		return p, string(b)
	}
	p, js := problem(fmt.Errorf("update: %w", fieldErr{5001, &de, &zero, fmt.Errorf("%w: attribute 5001 (Integer): too large", errInvalid)}))
	js0 := js
	if p.Type != "about:blank" || p.Reason != "" || p.Status != 400 || !strings.Contains(p.Detail, "attribute 5001") ||
		!strings.Contains(js, `"attribute":5001,"language":202,"variant":0`) {
		t.Fatalf("problem %s", js)
	}
	_, js = problem(fieldErr{5002, nil, nil, fmt.Errorf("%w: attribute 5002: referenced object 9 does not exist", errInvalid)})
	if !strings.Contains(js, `"attribute":5002`) || strings.Contains(js, `"language"`) || strings.Contains(js, `"variant"`) {
		t.Fatalf("problem without a language %s", js)
	}
	p, js = problem(positioned{fieldErr{5003, &zero, &zero, fmt.Errorf("%w: attribute 5003: value x is not an object id", errInvalid)}, 2})
	if p.SortReverse == nil || *p.SortReverse != 2 || !strings.Contains(js, `"attribute":5003,"language":0,"variant":0,"sortReverse":2`) {
		t.Fatalf("problem with a row %s", js)
	}
	if strings.Contains(js0, `"sortReverse"`) {
		t.Fatalf("a value without a known row names one: %s", js0)
	}
	_, js = problem(fmt.Errorf("%w: no objects given", errInvalid))
	if strings.Contains(js, `"attribute"`) {
		t.Fatalf("a 400 about no value names a field: %s", js)
	}
}

// TestProblemDetailIsTheDomainMessage: a ProblemDetails' detail is what
// the domain says, without the sentinel's kind label ("invalid argument:")
// that only repeats the status.
func TestProblemDetailIsTheDomainMessage(t *testing.T) {
	errArg := errkind.New(errkind.Invalid, "invalid argument")
	for _, err := range []error{
		fmt.Errorf("delivery: %w: filter: unknown operator \"~\"", errArg),
		fmt.Errorf("content: %w: filter: unknown operator \"~\"", errInvalid),
	} {
		st := status.Convert(DomainStatus(context.Background(), slog.Default(), "test", err))
		p := ProblemOf(st, "/x")
		if p.Status != http.StatusBadRequest || p.Detail != `filter: unknown operator "~"` {
			t.Errorf("%v: status %d, detail %q", err, p.Status, p.Detail)
		}
	}
}
