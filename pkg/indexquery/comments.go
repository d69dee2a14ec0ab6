package indexquery

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/cmsplatform/cms/pkg/indexdoc"
	"github.com/cmsplatform/cms/pkg/search"
	"github.com/cmsplatform/cms/pkg/store"
)

// Comment questions (CommentIndex_*), answered from the comments index of
// pkg/indexwriter. A search covers the comments of exactly the requested
// branch (comments belong to one branch; a child branch does not see its
// parent's), never soft-deleted ones. Users compare without regard to case.

// Comment sort fields (NovaDB CommentField).
const (
	CommentFieldID = iota
	CommentFieldUser
	CommentFieldCreated
	CommentFieldModified
	CommentFieldObjectID
	CommentFieldObjectType
)

// CommentFilter is CommentFilterCondition; nil and empty do not filter.
type CommentFilter struct {
	// SearchPhrase: every word must occur in the text; a word ending in
	// "*" matches as a prefix.
	SearchPhrase *string
	User         *string
	Mentioned    *string
	ObjectTypes  []int64
}

// CommentFreshness is the read-your-writes part of a comment request.
type CommentFreshness struct {
	// MinTimestamp, when set, is the comment index time to wait for.
	MinTimestamp *time.Time
	// MaxWait is the wire duration ("00:00:05", "PT5S"); empty = default.
	MaxWait string
}

// CommentSort is CommentSortBy.
type CommentSort struct {
	Field   int
	Reverse bool
}

// CommentSearchRequest is CommentSearchRequest. Without Sort comments come
// newest (highest id) first.
type CommentSearchRequest struct {
	Branch int64
	Filter CommentFilter
	Sort   *CommentSort
	Page   Page
	CommentFreshness
}

// CommentItem is CommentItem.
type CommentItem struct {
	ID                    int64
	User                  string
	Created, Modified     time.Time
	ObjectRef, ObjectType int64
	Summary               string
	MentionedUsers        []string
}

// CommentSearchResult is CommentSearchResult. Timestamp is nil before
// the first comment was indexed.
type CommentSearchResult struct {
	Timestamp *time.Time
	More      bool
	Items     []CommentItem
}

// CommentSearch runs a comment search.
func (s *Service) CommentSearch(ctx context.Context, r CommentSearchRequest) (CommentSearchResult, error) {
	if err := validPage(r.Page); err != nil {
		return CommentSearchResult{}, err
	}
	if err := checkCommentFilter(r.Filter); err != nil {
		return CommentSearchResult{}, err
	}
	sort := []search.SortField{{Field: indexdoc.FieldCommentID, Desc: true}}
	if r.Sort != nil {
		f, ok := commentSortField(r.Sort.Field)
		if !ok {
			return CommentSearchResult{}, invalid("sort.field %d (want 0..5)", r.Sort.Field)
		}
		sort = []search.SortField{{Field: f, Desc: r.Sort.Reverse}}
		if f != indexdoc.FieldCommentID {
			sort = append(sort, search.SortField{Field: indexdoc.FieldCommentID})
		}
	}
	ts, err := s.waitComments(ctx, r.CommentFreshness)
	if err != nil {
		return CommentSearchResult{}, err
	}
	size := search.MaxResultWindow - r.Page.Skip
	if r.Page.Take > 0 {
		size = min(size, r.Page.Take)
	}
	res, err := s.runComments(ctx, search.SearchRequest{Query: commentQuery(r.Branch, r.Filter),
		Sort: sort, From: r.Page.Skip, Size: size})
	if err != nil {
		return CommentSearchResult{}, err
	}
	out := CommentSearchResult{Timestamp: ts, More: int64(r.Page.Skip+len(res.Hits)) < res.Total,
		Items: make([]CommentItem, 0, len(res.Hits))}
	for _, h := range res.Hits {
		out.Items = append(out.Items, commentItem(h.Fields))
	}
	return out, nil
}

func commentSortField(f int) (string, bool) {
	switch f {
	case CommentFieldID:
		return indexdoc.FieldCommentID, true
	case CommentFieldUser:
		return indexdoc.FieldCommentUserKey, true
	case CommentFieldCreated:
		return indexdoc.FieldCommentCreated, true
	case CommentFieldModified:
		return indexdoc.FieldCommentModified, true
	case CommentFieldObjectID:
		return indexdoc.FieldCommentObjectRef, true
	case CommentFieldObjectType:
		return indexdoc.FieldCommentObjectType, true
	}
	return "", false
}

func commentItem(f map[string]any) CommentItem {
	it := CommentItem{ID: int64Of(f[indexdoc.FieldCommentID]), ObjectRef: int64Of(f[indexdoc.FieldCommentObjectRef]),
		ObjectType: int64Of(f[indexdoc.FieldCommentObjectType]),
		Created:    time.UnixMicro(int64Of(f[indexdoc.FieldCommentCreated])).UTC(),
		Modified:   time.UnixMicro(int64Of(f[indexdoc.FieldCommentModified])).UTC()}
	it.User, _ = f[indexdoc.FieldCommentUser].(string)
	it.Summary, _ = f[indexdoc.FieldCommentSummary].(string)
	it.MentionedUsers = strs(f[indexdoc.FieldCommentMentioned])
	return it
}

// CommentCountRequest is CommentCountRequest.
type CommentCountRequest struct {
	Branch int64
	Filter CommentFilter
	CommentFreshness
}

// CommentCountResult is CommentCountResult.
type CommentCountResult struct {
	Timestamp *time.Time
	Count     int64
}

// CommentCount counts the comments matching the filter.
func (s *Service) CommentCount(ctx context.Context, r CommentCountRequest) (CommentCountResult, error) {
	if err := checkCommentFilter(r.Filter); err != nil {
		return CommentCountResult{}, err
	}
	ts, err := s.waitComments(ctx, r.CommentFreshness)
	if err != nil {
		return CommentCountResult{}, err
	}
	n, err := s.eng.Count(ctx, s.comments, commentQuery(r.Branch, r.Filter))
	if errors.Is(err, search.ErrIndexNotFound) {
		n, err = 0, nil
	}
	return CommentCountResult{Timestamp: ts, Count: n}, err
}

// CommentOccurrencesRequest is CommentOccurrencesRequest.
type CommentOccurrencesRequest struct {
	Branch int64
	Filter CommentFilter
	Page   Page
	CommentFreshness
	User, MentionedUsers, ObjectType bool
}

// CommentOccurrencesResult is CommentOccurrencesResult; unrequested
// records are nil.
type CommentOccurrencesResult struct {
	Timestamp                        *time.Time
	User, MentionedUsers, ObjectType *Occurrences
}

// CommentOccurrences counts the authors, mentioned users and object types
// of the matching comments (values sorted, cut by Page like Occurrences).
// Authors and mentioned users are counted as written.
func (s *Service) CommentOccurrences(ctx context.Context, r CommentOccurrencesRequest) (CommentOccurrencesResult, error) {
	if err := validPage(r.Page); err != nil {
		return CommentOccurrencesResult{}, err
	}
	if err := checkCommentFilter(r.Filter); err != nil {
		return CommentOccurrencesResult{}, err
	}
	ts, err := s.waitComments(ctx, r.CommentFreshness)
	if err != nil {
		return CommentOccurrencesResult{}, err
	}
	out := CommentOccurrencesResult{Timestamp: ts}
	err = countFields(ctx, s.runComments, search.SearchRequest{Query: commentQuery(r.Branch, r.Filter)}, r.Page, []occurrenceField{
		{r.User, indexdoc.FieldCommentUser, "string", &out.User},
		{r.MentionedUsers, indexdoc.FieldCommentMentioned, "string", &out.MentionedUsers},
		{r.ObjectType, indexdoc.FieldCommentObjectType, "number", &out.ObjectType},
	})
	return out, err
}

// checkCommentFilter caps the search phrase (MaxPhraseBytes, and
// MaxPhraseTerms words) before any query is built.
func checkCommentFilter(f CommentFilter) error {
	if f.SearchPhrase == nil {
		return nil
	}
	const name = "filter.searchPhrase"
	if err := checkPhrase(name, *f.SearchPhrase); err != nil {
		return err
	}
	return checkTerms(name, max(len(strings.Fields(*f.SearchPhrase)), len(indexdoc.Words(*f.SearchPhrase))))
}

// commentQuery selects the live comments of branch matching f (checked by
// checkCommentFilter).
func commentQuery(branch int64, f CommentFilter) search.Query {
	q := search.And{
		search.Term{Field: indexdoc.FieldCommentBranch, Value: branch},
		search.Not{Query: search.Term{Field: indexdoc.FieldCommentDeleted, Value: true}},
	}
	if f.User != nil && strings.TrimSpace(*f.User) != "" {
		q = append(q, search.Term{Field: indexdoc.FieldCommentUserKey, Value: store.CommentUserKey(strings.TrimSpace(*f.User))})
	}
	if f.Mentioned != nil && strings.TrimSpace(*f.Mentioned) != "" {
		q = append(q, search.Term{Field: indexdoc.FieldCommentMentionKey, Value: store.CommentUserKey(strings.TrimSpace(*f.Mentioned))})
	}
	if len(f.ObjectTypes) > 0 {
		q = append(q, search.Terms{Field: indexdoc.FieldCommentObjectType, Values: anys(f.ObjectTypes)})
	}
	if f.SearchPhrase != nil {
		for _, w := range strings.Fields(*f.SearchPhrase) {
			if p, ok := strings.CutSuffix(w, "*"); ok {
				if p = strings.Trim(p, "*"); p != "" {
					q = append(q, search.Prefix{Field: indexdoc.FieldCommentText, Value: indexdoc.Truncate(strings.ToLower(p))})
				}
				continue
			}
			// Cut like an indexed term: a 2 MiB word analysed into
			// thousands of tokens exceeded Elasticsearch's clause limit
			// (an internal error).
			q = append(q, search.Match{Field: indexdoc.FieldCommentText, Text: indexdoc.Truncate(w), All: true})
		}
	}
	return q
}

// runComments searches the comments index; a missing one has no comments.
func (s *Service) runComments(ctx context.Context, req search.SearchRequest) (search.SearchResult, error) {
	req.Index = s.comments
	res, err := s.eng.Search(ctx, req)
	if errors.Is(err, search.ErrIndexNotFound) {
		res, err = search.SearchResult{Aggs: map[string]search.AggResult{}}, nil
		for _, a := range req.Aggs {
			res.Aggs[a.Key()] = search.AggResult{}
		}
	}
	return res, err
}

// waitComments honours f and returns the comment timestamp the answer
// reflects (nil before the first comment event).
func (s *Service) waitComments(ctx context.Context, f CommentFreshness) (*time.Time, error) {
	d := DefaultMaxWait
	if f.MaxWait != "" {
		var err error
		if d, err = ParseDuration(f.MaxWait); err != nil {
			return nil, invalid("maxWaitTime: %v", err)
		}
	}
	d = min(d, s.maxWait)
	var ts time.Time
	var ok bool
	var err error
	if f.MinTimestamp == nil {
		ts, ok, err = s.tracking.CommentTimestamp(ctx)
	} else {
		ts, ok, err = s.tracking.WaitForCommentTimestamp(ctx, *f.MinTimestamp, d)
		if errors.Is(err, indexdoc.ErrWaitTimeout) {
			s.log.LogAttrs(ctx, slog.LevelDebug, "indexquery: comment timestamp not reached",
				slog.Time("want", *f.MinTimestamp), slog.Time("have", ts))
			err = nil
		}
	}
	if err != nil || !ok {
		return nil, err
	}
	return &ts, nil
}

// XMLLinkCountRequest is ObjectXmlLinkCountRequest.
type XMLLinkCountRequest struct {
	Branch    int64
	ObjectIDs []int64
	Freshness
}

// XMLLinkCount counts the live objects of the branch whose XML values link
// to one of ObjectIDs (indexwriter.XMLLinks). No ids count nothing.
func (s *Service) XMLLinkCount(ctx context.Context, r XMLLinkCountRequest) (CountResult, error) {
	v, err := s.wait(ctx, r.Freshness)
	if err != nil {
		return CountResult{}, err
	}
	if len(r.ObjectIDs) == 0 {
		return CountResult{Version: v}, nil
	}
	q := search.And{
		search.Term{Field: indexdoc.FieldBranch, Value: r.Branch},
		search.Terms{Field: indexdoc.FieldXMLLinks, Values: anys(r.ObjectIDs)},
		search.Not{Query: search.Term{Field: indexdoc.FieldDeleted, Value: true}},
	}
	n, err := s.count(ctx, q)
	return CountResult{Version: v, Count: n}, err
}
