package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cmsplatform/cms/pkg/store"
)

// This file implements store.ChainReader: every method is one statement,
// the branch list bound as one array parameter.

func (r reader) GetObjectsIn(ctx context.Context, branches, ids []int64) ([]store.Object, error) {
	if len(branches) == 0 || len(ids) == 0 {
		return nil, nil
	}
	return r.queryObjects(ctx, `SELECT `+objectColumns+` FROM objects
		WHERE branch = ANY($1) AND id = ANY($2) ORDER BY id, branch`, branches, ids)
}

func (r reader) FindObjectsIn(ctx context.Context, branches []int64, guids, apiIdentifiers []string) ([]store.Object, error) {
	if len(guids) == 0 && len(apiIdentifiers) == 0 {
		return nil, nil
	}
	if guids == nil {
		guids = []string{}
	}
	if apiIdentifiers == nil {
		apiIdentifiers = []string{}
	}
	q := `SELECT ` + objectColumns + ` FROM objects WHERE (guid = ANY($1) OR api_identifier = ANY($2))`
	args := []any{guids, apiIdentifiers}
	if len(branches) > 0 {
		q += ` AND branch = ANY($3)`
		args = append(args, branches)
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
	var inner strings.Builder
	args := []any{branches, q.AfterID}
	inner.WriteString(`SELECT DISTINCT id FROM objects WHERE branch = ANY($1) AND id > $2`)
	if len(q.TypeIDs) > 0 {
		args = append(args, q.TypeIDs)
		inner.WriteString(` AND type_id = ANY($` + strconv.Itoa(len(args)) + `)`)
	}
	inner.WriteString(` ORDER BY id`)
	if q.Limit > 0 {
		args = append(args, q.Limit)
		inner.WriteString(` LIMIT $` + strconv.Itoa(len(args)))
	}
	return r.queryObjects(ctx, `SELECT `+objectColumns+` FROM objects
		WHERE branch = ANY($1) AND id IN (`+inner.String()+`) ORDER BY id, branch`, args...)
}

func (r reader) ListValuesIn(ctx context.Context, branches, objectIDs []int64, f store.ValueFilter) ([]store.Value, error) {
	if len(branches) == 0 || len(objectIDs) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString(`SELECT object_id, branch, attribute_id, language, variant, sort_reverse, value::text, unit_ref, modified_tx
		FROM object_values WHERE branch = ANY($1) AND object_id = ANY($2)`)
	args := []any{branches, objectIDs}
	for _, c := range []struct {
		col string
		ids []int64
	}{{"attribute_id", f.AttributeIDs}, {"language", f.Languages}, {"variant", f.Variants}} {
		if len(c.ids) > 0 {
			args = append(args, c.ids)
			b.WriteString(` AND ` + c.col + ` = ANY($` + strconv.Itoa(len(args)) + `)`)
		}
	}
	b.WriteString(` ORDER BY object_id, attribute_id, variant, language, sort_reverse, branch`)
	return r.queryValues(ctx, b.String(), args...)
}
