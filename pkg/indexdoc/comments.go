package indexdoc

import (
	"strconv"

	"github.com/cmsplatform/cms/pkg/search"
)

// Index names of the comment side (before the prefixes).
const (
	// CommentsIndex holds one document per comment.
	CommentsIndex = "comments"
	// CommentStateIndex holds the CommentTimestampDocID document.
	CommentStateIndex = "indexer-comment-state"
	// CommentTimestampDocID's field "micros" is the change-tracking
	// timestamp of the comment index in Unix microseconds.
	CommentTimestampDocID = "changeTrackingTimestamp"
	FieldCommentMicros    = "micros" // long: the timestamp of CommentTimestampDocID
)

// Field names of a comment document. Times are Unix microseconds (the
// store's precision; search dates only keep milliseconds).
const (
	FieldCommentID         = "id"             // long
	FieldCommentBranch     = "branch"         // long
	FieldCommentObjectRef  = "objectRef"      // long
	FieldCommentObjectType = "objectType"     // long: type of the commented object (absent when unknown)
	FieldCommentUser       = "user"           // keyword: author as written
	FieldCommentUserKey    = "userKey"        // keyword: store.CommentUserKey(author), for filter and sort
	FieldCommentCreated    = "createdUs"      // long
	FieldCommentModified   = "modifiedUs"     // long
	FieldCommentText       = "text"           // text: the body's text (XHTML stripped)
	FieldCommentSummary    = "summary"        // stored: CommentSummary of the text
	FieldCommentMentioned  = "mentionedUsers" // keyword: mentioned users as written
	FieldCommentMentionKey = "mentionedKeys"  // keyword: store.CommentUserKey of each
	FieldCommentDeleted    = "deleted"        // bool
)

// CommentsMapping is the mapping of CommentsIndex.
func CommentsMapping() search.Mapping {
	return search.Mapping{Fields: map[string]search.Kind{
		FieldCommentID: search.Long, FieldCommentBranch: search.Long, FieldCommentObjectRef: search.Long,
		FieldCommentObjectType: search.Long, FieldCommentUser: search.Keyword, FieldCommentUserKey: search.Keyword,
		FieldCommentCreated: search.Long, FieldCommentModified: search.Long, FieldCommentText: search.Text,
		FieldCommentSummary: search.Stored, FieldCommentMentioned: search.Keyword,
		FieldCommentMentionKey: search.Keyword, FieldCommentDeleted: search.Bool,
	}}
}

// CommentStateMapping is the mapping of CommentStateIndex.
func CommentStateMapping() search.Mapping {
	return search.Mapping{Fields: map[string]search.Kind{FieldCommentMicros: search.Long}}
}

// CommentDocID is the id of the document of comment id.
func CommentDocID(id int64) string { return strconv.FormatInt(id, 10) }
