// Package search defines the document index that the Delivery and Index
// groups read and the indexer writes: one Engine interface, the document and
// query types it speaks, and the normalisation rules every implementation
// shares, so that Bleve (embedded, search/bleve) and Elasticsearch
// (distributed, search/elastic) answer the same queries the same way. The
// conformance suite in search/searchtest pins that behaviour down.
//
// Documents are versioned externally: the version is the id of the
// transaction that produced the document. A write whose version is not greater
// than the stored one is ignored, and a delete leaves a tombstone carrying its
// version, so events that the event bus delivers out of order can never
// overwrite newer data or resurrect a deleted document.
package search

import (
	"context"
	"errors"
	"time"
)

// Errors returned by every Engine. Implementations wrap them with %w.
var (
	// ErrNotFound: the document does not exist (or is deleted).
	ErrNotFound = errors.New("search: document not found")
	// ErrIndexNotFound: the index was never ensured or has been deleted.
	ErrIndexNotFound = errors.New("search: index not found")
	// ErrMappingConflict: EnsureIndex was called with a mapping that differs
	// from the one the existing index was created with. Mappings are
	// immutable; a changed mapping needs a new index (and a reindex).
	ErrMappingConflict = errors.New("search: index exists with a different mapping")
	// ErrInvalidMapping: a field name or kind is not allowed.
	ErrInvalidMapping = errors.New("search: invalid mapping")
	// ErrInvalidDocument: a document has an unknown field, a value of the
	// wrong kind, an empty id or a version < 1.
	ErrInvalidDocument = errors.New("search: invalid document")
	// ErrInvalidQuery: a query, sort, paging or aggregation is malformed or
	// uses a field in a way its kind does not allow.
	ErrInvalidQuery = errors.New("search: invalid query")
	// ErrClosed: the engine has been closed.
	ErrClosed = errors.New("search: engine closed")
	// ErrUnavailable: the engine cannot answer right now (Elasticsearch
	// shards still starting, for example); retrying later may succeed.
	ErrUnavailable = errors.New("search: temporarily unavailable")
)

// MaxResultWindow is the largest From+Size a search may ask for. It matches
// Elasticsearch's default index.max_result_window and is enforced by every
// implementation so that both behave alike.
const MaxResultWindow = 10000

// Engine is a set of named indexes of versioned documents.
//
// All methods are safe for concurrent use. Writes made by Bulk are visible to
// Get immediately and to Search and Count after Refresh returns. An
// implementation may make them visible earlier only one whole Bulk call at
// a time (Bleve applies a call as one batch), never a part of one: a
// writer that sends one transaction's documents in one Bulk and then
// refreshes has its readers see all of them or none (pkg/indexwriter).
type Engine interface {
	// EnsureIndex creates the index if it does not exist. It is idempotent:
	// calling it again with an equal mapping is a no-op; with a different
	// mapping it returns ErrMappingConflict.
	EnsureIndex(ctx context.Context, index string, m Mapping) error
	// DeleteIndex removes the index and all its documents and tombstones.
	// Deleting an index that does not exist returns ErrIndexNotFound.
	DeleteIndex(ctx context.Context, index string) error
	// Bulk applies ops in order. Every document is validated against the
	// mapping first; if any is invalid nothing is written and the error wraps
	// ErrInvalidDocument. An op whose version is <= the stored version of its
	// id (document or tombstone) is ignored and counted in BulkResult.Stale;
	// it is not an error.
	Bulk(ctx context.Context, index string, ops []Op) (BulkResult, error)
	// Get returns the current document, or ErrNotFound.
	Get(ctx context.Context, index, id string) (Document, error)
	// Search runs a query with sorting, paging and terms aggregations.
	Search(ctx context.Context, req SearchRequest) (SearchResult, error)
	// Count returns the number of documents matching q (nil = all).
	Count(ctx context.Context, index string, q Query) (int64, error)
	// Refresh makes all writes acknowledged so far visible to Search and
	// Count (read-your-writes).
	Refresh(ctx context.Context, index string) error
	// Close releases resources. Further calls return ErrClosed.
	Close() error
}

// Document is one indexed document.
type Document struct {
	ID string
	// Version is the external version: the id of the transaction that
	// produced this state. It must be >= 1.
	Version int64
	// Fields holds values keyed by mapped field name. Values read back are
	// normalised by kind: keyword and text → string, long → int64, double →
	// float64, bool → bool, date → time.Time (UTC, millisecond precision).
	// A multi-valued field is a []any of such values.
	Fields map[string]any
}

// OpType says what an Op does.
type OpType int

const (
	// OpUpsert creates or replaces a document.
	OpUpsert OpType = iota + 1
	// OpDelete deletes a document, leaving a tombstone with the version.
	OpDelete
)

// Op is one write in a Bulk call.
type Op struct {
	Type OpType
	// Doc is the document to write. For OpDelete only ID and Version count.
	Doc Document
}

// Upsert returns an upsert op for doc.
func Upsert(doc Document) Op { return Op{Type: OpUpsert, Doc: doc} }

// Delete returns a delete op for id at version.
func Delete(id string, version int64) Op {
	return Op{Type: OpDelete, Doc: Document{ID: id, Version: version}}
}

// BulkResult counts what a Bulk call did.
type BulkResult struct {
	// Applied ops changed the index (or, for a delete of an unknown id,
	// recorded a tombstone).
	Applied int
	// Stale ops were ignored because a newer or equal version was stored.
	Stale int
}

// SortField orders search hits by one field.
type SortField struct {
	// Field is a mapped non-text field, or ScoreField.
	Field string
	Desc  bool
}

// ScoreField sorts by relevance score (use Desc for best first).
const ScoreField = "_score"

// TermsAgg asks for the most frequent values of a non-text field among the
// matching documents (occurrences, facets, suggestions).
type TermsAgg struct {
	// Name keys the result in SearchResult.Aggs; defaults to Field.
	Name  string
	Field string
	// Size is the number of buckets to return (1..MaxResultWindow).
	Size int
	// Prefix, when set, only counts keyword values starting with it
	// (case-sensitive; keyword fields only).
	Prefix string
	// Filter, when set, counts only the matching documents it also
	// matches (Elasticsearch's filter aggregation): one search answers
	// several aggregations over different subsets of its matches. It does
	// not change Total or Hits.
	Filter Query
}

// Key returns the name the result of a is keyed by.
func (a TermsAgg) Key() string {
	if a.Name != "" {
		return a.Name
	}
	return a.Field
}

// SearchRequest is one search.
type SearchRequest struct {
	Index string
	// Query selects documents; nil matches all.
	Query Query
	// Sort orders hits; ties (and an empty Sort) are broken by ID ascending.
	Sort []SortField
	// From and Size page through hits; Size 0 returns no hits (only Total
	// and Aggs). From+Size must not exceed MaxResultWindow.
	From, Size int
	Aggs       []TermsAgg
	// Fields, when not nil, limits the fields of each hit to these names
	// (those the document has; names not mapped are ignored; no wildcards:
	// Elasticsearch would read them as source filter patterns): callers
	// that need one stored field skip copying the rest. nil returns every
	// field, an empty non-nil slice none.
	Fields []string
	// Held, when set, reports whether the caller already holds the fields
	// of document id at version (decoded from an earlier answer, see
	// pkg/delivery's source cache): an engine that learns a hit's version
	// before reading its stored fields may then return the hit without
	// Fields, sparing the read and its decoding. It is called from the
	// goroutine calling Search, before Search returns; an engine that
	// reads fields anyway (Elasticsearch returns them with the hits) may
	// ignore it, so a hit of a held version may still carry Fields.
	Held func(id string, version int64) bool
}

// Hit is one search result.
type Hit struct {
	ID      string
	Version int64
	Score   float64
	Fields  map[string]any
}

// Bucket is one value of a terms aggregation with the number of matching
// documents that have it. Key is normalised like Document.Fields.
type Bucket struct {
	Key   any
	Count int64
}

// AggResult is the result of one TermsAgg. Buckets are ordered by Count
// descending, then Key ascending.
type AggResult struct {
	Buckets []Bucket
	// Other is the number of values (counted per document) not in Buckets;
	// Other > 0 means there are more values than Size.
	Other int64
	// Missing is the number of matching documents without the field.
	Missing int64
	// Docs is the number of documents counted: those matching the query
	// (and Filter, when set).
	Docs int64
}

// SearchResult is the answer to a SearchRequest.
type SearchResult struct {
	// Total is the exact number of matching documents.
	Total int64
	Hits  []Hit
	Aggs  map[string]AggResult
}

// dateUnit is the precision dates are stored with (Elasticsearch's).
const dateUnit = time.Millisecond
