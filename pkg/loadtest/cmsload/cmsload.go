// Package cmsload is the CMS workload of the load harness: it seeds a
// small data set through the Management API, waits until Delivery shows
// it, and builds the loadtest operations (Delivery GET by id, Delivery
// list by type with resolve, Index search, Management update) plus a
// baseline: a bare net/http server answering the bytes of a Delivery GET.
// `cms load` and the in-process benchmark of services/internal/app use it.
package cmsload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Operation names accepted in a mix.
const (
	OpDeliveryGet     = "delivery-get"
	OpDeliveryList    = "delivery-list"
	OpIndexSearch     = "index-search"
	OpManagementWrite = "management-write"
	// OpBaseline is the name of the baseline operation.
	OpBaseline = "baseline-get"
)

// DefaultMix is the mix of `cms load` and the benchmark.
const DefaultMix = "delivery-get=60,delivery-list=25,index-search=10,management-write=5"

// ErrStatus is wrapped by the errors of requests answered with an
// unexpected HTTP status.
var ErrStatus = errors.New("unexpected HTTP status")

// Target is a running deployment.
type Target struct {
	// URL is the HTTP root, e.g. http://localhost:8080.
	URL            string
	User, Password string
	Branch         int
	Client         *http.Client
}

// Paths under Target.URL.
const (
	managementPath = "/apis/cms/v1"
	indexPath      = "/apis/index/v1"
	deliveryPath   = "/delivery/api"
)

// do sends one request and returns the status and body; a status not in
// want is an error wrapping ErrStatus.
func (t Target) do(ctx context.Context, method, path string, body []byte, hdr map[string]string, want ...int) (int, []byte, http.Header, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(t.URL, "/")+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.SetBasicAuth(t.User, t.Password)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := t.client().Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, resp.Header, err
	}
	for _, w := range want {
		if resp.StatusCode == w {
			return resp.StatusCode, b, resp.Header, nil
		}
	}
	return resp.StatusCode, b, resp.Header, fmt.Errorf("%s %s: %w %d: %.200s", method, path, ErrStatus, resp.StatusCode, b)
}

func (t Target) client() *http.Client {
	if t.Client != nil {
		return t.Client
	}
	return http.DefaultClient
}

// seedBatch objects are created per request; the first batch refers to nothing.
const seedBatch = 50

// Data is the seeded data set.
type Data struct {
	Type      int    // the type's object id
	TypeAPI   string // the type's ApiIdentifier (Delivery path segment)
	Title     int    // String attribute, language independent
	Note      int    // String attribute rewritten by management-write
	Refs      int    // multi-valued ObjRef attribute
	RefsAPI   string // its ApiIdentifier (Delivery resolve)
	Objects   []int  // the seeded objects
	LastTx    int64  // transaction of the last write
	GetPath   string // Delivery GET of Objects[0] (the baseline's bytes)
	GetBody   []byte // its answer
	GetHeader http.Header
}

type createResponse struct {
	TransactionID    int64
	CreatedObjectIDs []int
}

// parseCreate reads a CreateObjectsResponse; the transaction id may be a
// JSON number or (proto int64 convention) a string.
func parseCreate(b []byte) (createResponse, error) {
	var raw struct {
		Transaction struct {
			ID json.Number `json:"id"`
		} `json:"transaction"`
		CreatedObjectIDs []int `json:"createdObjectIds"`
	}
	var out createResponse
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return out, fmt.Errorf("create response %.200s: %w", b, err)
	}
	id, err := strconv.ParseInt(strings.Trim(string(raw.Transaction.ID), `"`), 10, 64)
	if err != nil {
		return out, fmt.Errorf("create response transaction id %q: %w", raw.Transaction.ID, err)
	}
	out.TransactionID = id
	out.CreatedObjectIDs = raw.CreatedObjectIDs
	return out, nil
}

// create posts a CreateObjectsRequest with objects (already JSON).
func (t Target) create(ctx context.Context, comment string, objects []string) (createResponse, error) {
	body := `{"comment":` + strconv.Quote(comment) + `,"objects":[` + strings.Join(objects, ",") + `]}`
	_, b, _, err := t.do(ctx, http.MethodPost, fmt.Sprintf("%s/branches/%d/objects", managementPath, t.Branch), []byte(body), nil, http.StatusCreated, http.StatusOK)
	if err != nil {
		return createResponse{}, err
	}
	r, err := parseCreate(b)
	if err == nil && len(r.CreatedObjectIDs) != len(objects) {
		err = fmt.Errorf("created %d objects, want %d: %.200s", len(r.CreatedObjectIDs), len(objects), b)
	}
	return r, err
}

// Seed creates a type, three attributes and n objects (each referring to
// up to three earlier ones), in batches of 50, then waits (up to wait)
// until Delivery shows the last write. The ApiIdentifiers carry a unique
// suffix so that repeated runs against one deployment do not collide.
func Seed(ctx context.Context, t Target, n int, wait time.Duration, log io.Writer) (*Data, error) {
	if log == nil {
		log = io.Discard
	}
	sfx := strconv.FormatInt(time.Now().UnixNano()%1e12, 36)
	d := &Data{TypeAPI: "loadItem" + sfx, RefsAPI: "loadRefs" + sfx}
	attr := func(api, dataType string, multi bool) string {
		return fmt.Sprintf(`{"meta":{"typeRef":10,"apiIdentifier":%q},"values":[{"attribute":1001,"language":0,"variant":0,"value":%q},`+
			`{"attribute":1004,"language":0,"variant":0,"value":%t}]}`, api, dataType, multi)
	}
	model, err := t.create(ctx, "load model", []string{
		fmt.Sprintf(`{"meta":{"typeRef":0,"apiIdentifier":%q},"values":[{"attribute":1000,"language":201,"variant":0,"value":"Load item"}]}`, d.TypeAPI),
		attr("loadTitle"+sfx, "String", false), attr("loadNote"+sfx, "String", false), attr(d.RefsAPI, "ObjRef", true)})
	if err != nil {
		return nil, fmt.Errorf("seed model: %w", err)
	}
	ids := model.CreatedObjectIDs
	d.Type, d.Title, d.Note, d.Refs = ids[0], ids[1], ids[2], ids[3]
	for start := 0; start < n; start += seedBatch {
		var objs []string
		for i := start; i < min(start+seedBatch, n); i++ {
			var vals []string
			vals = append(vals, fmt.Sprintf(`{"attribute":1000,"language":201,"variant":0,"value":"Load item %d"}`, i),
				fmt.Sprintf(`{"attribute":%d,"language":0,"variant":0,"value":"Load title %d"}`, d.Title, i%50))
			for k := range min(3, len(d.Objects)) {
				ref := d.Objects[(i*7+k*13)%len(d.Objects)]
				vals = append(vals, fmt.Sprintf(`{"attribute":%d,"language":0,"variant":0,"value":%d,"sortReverse":%d}`, d.Refs, ref, k))
			}
			objs = append(objs, fmt.Sprintf(`{"meta":{"typeRef":%d},"values":[%s]}`, d.Type, strings.Join(vals, ",")))
		}
		r, err := t.create(ctx, "load objects", objs)
		if err != nil {
			return nil, fmt.Errorf("seed objects: %w", err)
		}
		d.Objects = append(d.Objects, r.CreatedObjectIDs...)
		d.LastTx = r.TransactionID
		fmt.Fprintf(log, "seeded %d/%d objects (transaction %d)\n", len(d.Objects), n, d.LastTx)
	}
	if len(d.Objects) == 0 {
		return nil, errors.New("seed: no objects")
	}
	if err := waitVisible(ctx, t, d, wait); err != nil {
		return nil, err
	}
	d.GetPath = fmt.Sprintf("%s/branches/%d/objects/%d", deliveryPath, t.Branch, d.Objects[0])
	var (
		body []byte
		hdr  http.Header
	)
	// A shed or lagging server answers 503 (the deployment under test may
	// run with a tiny query queue): ask again.
	err = poll(ctx, time.Now().Add(wait), func() (bool, error) {
		code, b, h, err := t.do(ctx, http.MethodGet, d.GetPath, nil, nil, http.StatusOK)
		body, hdr = b, h
		return code == http.StatusServiceUnavailable, err
	})
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	d.GetBody, d.GetHeader = body, hdr
	return d, nil
}

// poll calls try until it says not to retry or the deadline passes, 200 ms
// apart, and returns try's last error.
func poll(ctx context.Context, deadline time.Time, try func() (retry bool, err error)) error {
	for {
		retry, err := try()
		if !retry || !time.Now().Before(deadline) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitVisible waits until Delivery answers the last seeded object with
// X-Cms-Min-Version: LastTx (it answers 503 while the index lags).
func waitVisible(ctx context.Context, t Target, d *Data, wait time.Duration) error {
	path := fmt.Sprintf("%s/branches/%d/objects/%d", deliveryPath, t.Branch, d.Objects[len(d.Objects)-1])
	hdr := map[string]string{"X-Cms-Min-Version": strconv.FormatInt(d.LastTx, 10), "X-Cms-Max-Wait": "5s"}
	err := poll(ctx, time.Now().Add(wait), func() (bool, error) {
		_, _, _, err := t.do(ctx, http.MethodGet, path, nil, hdr, http.StatusOK)
		return err != nil, err
	})
	if err != nil {
		return fmt.Errorf("seed not visible in Delivery after %v: %w", wait, err)
	}
	return nil
}
