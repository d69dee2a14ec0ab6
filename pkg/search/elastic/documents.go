package elastic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/cmsplatform/cms/pkg/search"
)

const (
	metaMapping = "cms_mapping" // _meta key holding the search.Mapping JSON
	fieldID     = "@id"         // keyword copy of the id: _id cannot be sorted on
)

// createBody is the PUT /<index> body for m.
func (e *Engine) createBody(m search.Mapping) (map[string]any, error) {
	raw, err := search.MarshalMapping(m)
	if err != nil {
		return nil, err
	}
	props := map[string]any{fieldID: map[string]any{"type": "keyword"}}
	for name, k := range m.Fields {
		var p map[string]any
		switch k {
		case search.Keyword:
			p = map[string]any{"type": "keyword"}
		case search.Stored:
			// Kept in _source only: no inverted index, no doc values, so
			// neither Lucene's term length limit nor any query applies.
			p = map[string]any{"type": "keyword", "index": false, "doc_values": false}
		case search.Text:
			p = map[string]any{"type": "text", "analyzer": "standard"}
		case search.Long:
			p = map[string]any{"type": "long"}
		case search.Double:
			p = map[string]any{"type": "double"}
		case search.Bool:
			p = map[string]any{"type": "boolean"}
		case search.Date:
			p = map[string]any{"type": "date", "format": "strict_date_optional_time||epoch_millis"}
		default:
			return nil, fmt.Errorf("%w: kind %q", search.ErrInvalidMapping, k)
		}
		props[name] = p
	}
	// Searches see writes at Refresh only, never a part of what a writer
	// refreshes at once (the indexer refreshes after a whole transaction:
	// pkg/indexwriter), and one shard refreshes as a whole.
	settings := map[string]any{"number_of_shards": 1, "number_of_replicas": e.replicas, "refresh_interval": "-1"}
	if e.gcDeletes > 0 {
		settings["gc_deletes"] = strconv.FormatInt(e.gcDeletes.Milliseconds(), 10) + "ms"
	}
	mappings := map[string]any{
		"dynamic":    "strict",
		"_meta":      map[string]any{metaMapping: string(raw)},
		"properties": props,
	}
	if len(m.KeywordPrefixes) > 0 {
		// Prefixed keyword fields come through dynamic templates; Normalize
		// keeps every other unmapped field out, as "strict" would.
		var templates []any
		for i, p := range m.KeywordPrefixes {
			templates = append(templates, map[string]any{"cms_prefix_" + strconv.Itoa(i): map[string]any{
				"match":              p + "*",
				"match_mapping_type": "string",
				"mapping":            map[string]any{"type": "keyword"},
			}})
		}
		mappings["dynamic"] = true
		mappings["date_detection"] = false // "2024" stays a string (keyword)
		mappings["dynamic_templates"] = templates
		settings["mapping.total_fields.limit"] = search.MaxDynamicFields
	}
	return map[string]any{
		"settings": map[string]any{"index": settings},
		"mappings": mappings,
	}, nil
}

type bulkAction struct {
	Index       string `json:"_index"`
	ID          string `json:"_id"`
	Version     int64  `json:"version"`
	VersionType string `json:"version_type"`
}

// maxBulkOps is how many ops one _bulk request carries: a longer Bulk is
// sent as several requests, which readers do not tell apart, since what
// they search changes only at Refresh (refresh_interval -1, EnsureIndex).
const maxBulkOps = 1000

// bulkInFlight is how many of a Bulk's _bulk requests are sent at once.
// Elasticsearch indexes one request's documents for a shard on one write
// thread; side by side they use as many as the node has. Readers see none
// of them before the indexer's refresh, so the order they land in does
// not show (and external versions decide between writes of one id).
const bulkInFlight = 4

// Bulk implements search.Engine. Every op is validated before the first
// request is sent.
func (e *Engine) Bulk(ctx context.Context, name string, ops []search.Op) (search.BulkResult, error) {
	var res search.BulkResult
	m, err := e.mapping(ctx, name)
	if err != nil {
		return res, err
	}
	var bodies []*bytes.Buffer
	var enc *json.Encoder
	for i, op := range ops {
		if i%maxBulkOps == 0 {
			bodies = append(bodies, &bytes.Buffer{})
			enc = json.NewEncoder(bodies[len(bodies)-1])
		}
		act := bulkAction{Index: e.full(name), ID: op.Doc.ID, Version: op.Doc.Version, VersionType: "external"}
		switch op.Type {
		case search.OpUpsert:
			fields, err := m.Normalize(op.Doc)
			if err != nil {
				return res, err
			}
			fields[fieldID] = op.Doc.ID
			_ = enc.Encode(map[string]any{"index": act})
			if err := enc.Encode(fields); err != nil {
				return res, fmt.Errorf("%w: %v", search.ErrInvalidDocument, err)
			}
		case search.OpDelete:
			if op.Doc.ID == "" || op.Doc.Version < 1 {
				return res, fmt.Errorf("%w: delete needs an id and a version >= 1", search.ErrInvalidDocument)
			}
			_ = enc.Encode(map[string]any{"delete": act})
		default:
			return res, fmt.Errorf("%w: unknown op type %d", search.ErrInvalidDocument, op.Type)
		}
	}
	results, errs := make([]search.BulkResult, len(bodies)), make([]error, len(bodies))
	var g errgroup.Group
	g.SetLimit(bulkInFlight)
	for i, body := range bodies {
		g.Go(func() error {
			results[i], errs[i] = e.bulk(ctx, name, body.Bytes())
			return nil
		})
	}
	_ = g.Wait()
	for _, r := range results {
		res.Applied += r.Applied
		res.Stale += r.Stale
	}
	return res, errors.Join(errs...)
}

// bulk sends one _bulk request.
func (e *Engine) bulk(ctx context.Context, name string, body []byte) (search.BulkResult, error) {
	var res search.BulkResult
	var out struct {
		Items []map[string]struct {
			ID     string `json:"_id"`
			Status int    `json:"status"`
			Result string `json:"result"`
			Error  *struct {
				Type   string `json:"type"`
				Reason string `json:"reason"`
			} `json:"error"`
		} `json:"items"`
	}
	if err := e.do(ctx, http.MethodPost, "/_bulk", body, "application/x-ndjson", &out); err != nil {
		return res, err
	}
	var errs []error
	for _, item := range out.Items {
		for _, r := range item { // one entry: "index" or "delete"
			switch {
			case r.Error == nil:
				res.Applied++ // includes deletes of unknown ids ("not_found"): they leave a tombstone
			case r.Error.Type == "version_conflict_engine_exception":
				res.Stale++
			case r.Error.Type == "index_not_found_exception":
				errs = append(errs, fmt.Errorf("%w: %q", search.ErrIndexNotFound, name))
			default:
				errs = append(errs, fmt.Errorf("elastic: bulk %q: %s: %s", r.ID, r.Error.Type, r.Error.Reason))
			}
		}
	}
	if len(errs) > 0 {
		return res, errors.Join(errs...)
	}
	return res, nil
}

// Get implements search.Engine. It is real-time: it sees writes before a
// refresh.
func (e *Engine) Get(ctx context.Context, name, id string) (search.Document, error) {
	m, err := e.mapping(ctx, name)
	if err != nil {
		return search.Document{}, err
	}
	if id == "" {
		return search.Document{}, fmt.Errorf("%w: empty id", search.ErrNotFound)
	}
	var out struct {
		Version int64           `json:"_version"`
		Source  json.RawMessage `json:"_source"`
	}
	err = e.doJSON(ctx, http.MethodGet, "/"+e.full(name)+"/_doc/"+url.PathEscape(id), nil, &out)
	var ee *esError
	switch {
	case errors.As(err, &ee) && ee.Status == http.StatusNotFound && ee.Type == "":
		return search.Document{}, fmt.Errorf("%w: %q", search.ErrNotFound, id)
	case err != nil:
		return search.Document{}, notFound(err, name)
	}
	fields, err := m.DecodeSource(out.Source)
	if err != nil {
		return search.Document{}, err
	}
	return search.Document{ID: id, Version: out.Version, Fields: fields}, nil
}
