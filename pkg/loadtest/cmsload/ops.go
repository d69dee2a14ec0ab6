package cmsload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cmsplatform/cms/pkg/loadtest"
)

// ErrMix is wrapped by ParseMix errors.
var ErrMix = errors.New("invalid mix")

// Weight is one entry of a mix.
type Weight struct {
	Name   string
	Weight int
}

// ParseMix reads "name=weight,name=weight" with the operation names above.
func ParseMix(s string) ([]Weight, error) {
	known := []string{OpDeliveryGet, OpDeliveryList, OpIndexSearch, OpManagementWrite}
	var out []Weight
	total := 0
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, w, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		n, err := strconv.Atoi(strings.TrimSpace(w))
		switch {
		case !ok || err != nil || n < 0:
			return nil, fmt.Errorf("%w: %q: want name=weight with a weight ≥ 0", ErrMix, part)
		case !slices.Contains(known, name):
			return nil, fmt.Errorf("%w: unknown operation %q (known: %s)", ErrMix, name, strings.Join(known, ", "))
		case slices.ContainsFunc(out, func(x Weight) bool { return x.Name == name }):
			return nil, fmt.Errorf("%w: %q twice", ErrMix, name)
		}
		out = append(out, Weight{name, n})
		total += n
	}
	if total == 0 {
		return nil, fmt.Errorf("%w: %q has no positive weight", ErrMix, s)
	}
	return out, nil
}

// Counts are observations of the operations beyond success and failure.
type Counts struct {
	// NotModified counts delivery-get answers 304 (to If-None-Match).
	NotModified atomic.Int64
}

// workload holds the state the operations share.
type workload struct {
	t     Target
	d     *Data
	c     *Counts
	n     atomic.Int64 // picks the next object
	gets  atomic.Int64 // delivery-get requests: every second one is conditional
	etags sync.Map     // object id → last ETag seen
}

func (w *workload) object() (int, int64) {
	i := w.n.Add(1)
	return w.d.Objects[int(i)%len(w.d.Objects)], i
}

// Ops builds the operations of mix against t with the seeded data d.
//   - delivery-get: GET one object by id; every second request sends the
//     ETag last seen for it (If-None-Match), answered 304 when unchanged.
//   - delivery-list: GET 20 objects of the type (by id) with the
//     reference attribute resolved.
//   - index-search: POST an Index object search (type + title equality,
//     sorted by display name, 20 per page).
//   - management-write: PATCH one object's note attribute.
//
// Answers are checked: a wrong status, a list without resolved refs or a
// search without hits is a failed request.
func Ops(t Target, d *Data, mix []Weight) ([]loadtest.Op, *Counts) {
	w := &workload{t: t, d: d, c: &Counts{}}
	fns := map[string]func(context.Context) error{
		OpDeliveryGet: w.deliveryGet, OpDeliveryList: w.deliveryList,
		OpIndexSearch: w.indexSearch, OpManagementWrite: w.managementWrite,
	}
	ops := make([]loadtest.Op, 0, len(mix))
	for _, m := range mix {
		ops = append(ops, loadtest.Op{Name: m.Name, Weight: m.Weight, Do: fns[m.Name]})
	}
	return ops, w.c
}

func (w *workload) deliveryGet(ctx context.Context) error {
	id, _ := w.object()
	var hdr map[string]string
	if w.gets.Add(1)%2 == 0 {
		if etag, ok := w.etags.Load(id); ok {
			hdr = map[string]string{"If-None-Match": etag.(string)}
		}
	}
	code, _, h, err := w.t.do(ctx, http.MethodGet, fmt.Sprintf("%s/branches/%d/objects/%d", deliveryPath, w.t.Branch, id), nil, hdr,
		http.StatusOK, http.StatusNotModified)
	if err == nil && code == http.StatusNotModified {
		w.c.NotModified.Add(1)
	}
	if err == nil && code == http.StatusOK {
		if etag := h.Get("ETag"); etag != "" {
			w.etags.Store(id, etag)
		}
	}
	return err
}

func (w *workload) deliveryList(ctx context.Context) error {
	_, i := w.object()
	// Objects of the first seed batch refer to nothing; the pages start
	// after it (default order is by id), so every page resolves refs.
	n := len(w.d.Objects)
	skip, withRefs := 0, n >= seedBatch+20
	if withRefs {
		skip = seedBatch + (int(i)*20)%(n-seedBatch-20+1)
	}
	path := fmt.Sprintf("%s/branches/%d/types/%s/objects?take=20&skip=%d&props=1&resolve=%s",
		deliveryPath, w.t.Branch, w.d.TypeAPI, skip, w.d.RefsAPI)
	_, b, _, err := w.t.do(ctx, http.MethodGet, path, nil, nil, http.StatusOK)
	if err == nil && (!bytes.Contains(b, []byte(`"objs":[{`)) || withRefs && !bytes.Contains(b, []byte(`"refs":[{`))) {
		err = fmt.Errorf("GET %s: want objects and resolved refs: %.200s", path, b)
	}
	return err
}

func (w *workload) indexSearch(ctx context.Context) error {
	_, i := w.object()
	body := fmt.Sprintf(`{"filter":{"objectTypeIds":[%d],"filters":[{"attrId":%d,"langId":0,"variantId":0,"value":"Load title %d","compareOperator":0}]},`+
		`"sortBy":[{"sortBy":3,"reverse":false}],"page":{"skip":0,"take":20}}`, w.d.Type, w.d.Title, i%50)
	_, b, _, err := w.t.do(ctx, http.MethodPost, fmt.Sprintf("%s/branches/%d/objects", indexPath, w.t.Branch), []byte(body), nil, http.StatusOK)
	if err == nil && !bytes.Contains(b, []byte(`"objects":[{`)) {
		err = fmt.Errorf("index search %s: no hits: %.200s", body, b)
	}
	return err
}

func (w *workload) managementWrite(ctx context.Context) error {
	id, i := w.object()
	body := fmt.Sprintf(`{"comment":"load","objects":[{"meta":{"id":%d,"typeRef":%d},"values":[{"attribute":%d,"language":0,"variant":0,"value":"note %d"}]}]}`,
		id, w.d.Type, w.d.Note, i)
	_, _, _, err := w.t.do(ctx, http.MethodPatch, fmt.Sprintf("%s/branches/%d/objects", managementPath, w.t.Branch), []byte(body), nil, http.StatusOK)
	return err
}

// Baseline is a bare net/http server on 127.0.0.1 that answers every
// request with the seeded Delivery GET's bytes and content headers.
type Baseline struct {
	URL string
	srv *http.Server
	ln  net.Listener
}

// StartBaseline starts the baseline server for d.
func StartBaseline(d *Data) (*Baseline, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctype, etag, cc := d.GetHeader.Get("Content-Type"), d.GetHeader.Get("ETag"), d.GetHeader.Get("Cache-Control")
	body := d.GetBody
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("ETag", etag)
		h.Set("Cache-Control", cc)
		_, _ = w.Write(body)
	})}
	go func() { _ = srv.Serve(ln) }()
	return &Baseline{URL: "http://" + ln.Addr().String(), srv: srv, ln: ln}, nil
}

// Op is the baseline operation: the same GET (with Basic auth) against
// the bare server, through client.
func (b *Baseline) Op(client *http.Client) loadtest.Op {
	t := Target{URL: b.URL, User: "load", Password: "load", Client: client}
	return loadtest.Op{Name: OpBaseline, Weight: 1, Do: func(ctx context.Context) error {
		_, _, _, err := t.do(ctx, http.MethodGet, "/", nil, nil, http.StatusOK)
		return err
	}}
}

// Close stops the server.
func (b *Baseline) Close() error { return b.srv.Close() }
