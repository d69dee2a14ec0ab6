package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/cmsplatform/cms/pkg/store"
)

// This file implements store.ChainReader: every method is one statement,
// the branch list bound as one JSON array parameter.

func (r reader) GetObjectsIn(ctx context.Context, branches, ids []int64) ([]store.Object, error) {
	if len(branches) == 0 || len(ids) == 0 {
		return nil, nil
	}
	return r.queryObjects(ctx, `SELECT `+objectColumns+` FROM objects
		WHERE branch IN (SELECT value FROM json_each(?)) AND id IN (SELECT value FROM json_each(?))
		ORDER BY id, branch`, idList(branches), idList(ids))
}

func (r reader) FindObjectsIn(ctx context.Context, branches []int64, guids, apiIdentifiers []string) ([]store.Object, error) {
	if len(guids) == 0 && len(apiIdentifiers) == 0 {
		return nil, nil
	}
	q := `SELECT ` + objectColumns + ` FROM objects WHERE (
		guid IN (SELECT value FROM json_each(?)) OR api_identifier IN (SELECT value FROM json_each(?)))`
	args := []any{stringList(guids), stringList(apiIdentifiers)}
	if len(branches) > 0 {
		q += ` AND branch IN (SELECT value FROM json_each(?))`
		args = append(args, idList(branches))
	}
	return r.queryObjects(ctx, q+` ORDER BY id, branch`, args...)
}

func (r reader) ListObjectsIn(ctx context.Context, branches []int64, q store.ObjectQuery) ([]store.Object, error) {
	if q.Deleted != nil {
		return nil, fmt.Errorf("%w: ListObjectsIn cannot filter by Deleted", store.ErrInvalidArgument)
	}
	if len(branches) == 0 {
		return nil, nil
	}
	bl := idList(branches)
	var inner strings.Builder
	args := []any{bl, bl, q.AfterID}
	inner.WriteString(`SELECT DISTINCT id FROM objects WHERE branch IN (SELECT value FROM json_each(?)) AND id > ?`)
	if len(q.TypeIDs) > 0 {
		inner.WriteString(` AND type_id IN (SELECT value FROM json_each(?))`)
		args = append(args, idList(q.TypeIDs))
	}
	inner.WriteString(` ORDER BY id`)
	if q.Limit > 0 {
		inner.WriteString(` LIMIT ?`)
		args = append(args, q.Limit)
	}
	return r.queryObjects(ctx, `SELECT `+objectColumns+` FROM objects
		WHERE branch IN (SELECT value FROM json_each(?)) AND id IN (`+inner.String()+`)
		ORDER BY id, branch`, args...)
}

func (r reader) ListValuesIn(ctx context.Context, branches, objectIDs []int64, f store.ValueFilter) ([]store.Value, error) {
	if len(branches) == 0 || len(objectIDs) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString(`SELECT object_id, branch, attribute_id, language, variant, sort_reverse, value, unit_ref, modified_tx FROM object_values
		WHERE branch IN (SELECT value FROM json_each(?)) AND object_id IN (SELECT value FROM json_each(?))`)
	args := []any{idList(branches), idList(objectIDs)}
	for _, c := range []struct {
		col string
		ids []int64
	}{{"attribute_id", f.AttributeIDs}, {"language", f.Languages}, {"variant", f.Variants}} {
		if len(c.ids) > 0 {
			b.WriteString(` AND ` + c.col + ` IN (SELECT value FROM json_each(?))`)
			args = append(args, idList(c.ids))
		}
	}
	b.WriteString(` ORDER BY object_id, attribute_id, variant, language, sort_reverse, branch`)
	return r.queryValues(ctx, b.String(), args...)
}
