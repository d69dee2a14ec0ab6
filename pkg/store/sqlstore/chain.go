package sqlstore

import (
	"context"
	"fmt"

	"github.com/cmsplatform/cms/pkg/store"
)

// This file implements store.ChainReader: every method is one statement,
// each list of ids bound as one parameter (Dialect.InList).

func (r reader) GetObjectsIn(ctx context.Context, branches, ids []int64) ([]store.Object, error) {
	if len(branches) == 0 || len(ids) == 0 {
		return nil, nil
	}
	return r.queryObjects(ctx, r.st.getObjectsIn, r.d.Int64List(branches), r.d.Int64List(ids))
}

func (r reader) FindObjectsIn(ctx context.Context, branches []int64, guids, apiIdentifiers []string) ([]store.Object, error) {
	if len(guids) == 0 && len(apiIdentifiers) == 0 {
		return nil, nil
	}
	b := r.newQuery()
	b.add(r.st.selectObjects)
	b.where(`(`+r.d.InList("guid", "?")+` OR `+r.d.InList("api_identifier", "?")+`)`,
		r.d.StringList(guids), r.d.StringList(apiIdentifiers))
	if len(branches) > 0 {
		b.whereIn("branch", branches)
	}
	b.add(` ORDER BY id, branch`)
	return r.queryObjects(ctx, b.sql(), b.args...)
}

func (r reader) ListObjectsIn(ctx context.Context, branches []int64, q store.ObjectQuery) ([]store.Object, error) {
	if q.Deleted != nil {
		return nil, fmt.Errorf("%w: ListObjectsIn cannot filter by Deleted", store.ErrInvalidArgument)
	}
	if len(branches) == 0 {
		return nil, nil
	}
	// The inner SELECT picks a page of ids, the outer one every row of them.
	inBranches := r.d.InList("branch", "?")
	branchList := r.d.Int64List(branches)
	b := r.newQuery()
	b.add(r.st.selectObjects + ` WHERE ` + inBranches + ` AND id IN (`)
	b.add(`SELECT DISTINCT id FROM objects WHERE `+inBranches+` AND id > ?`, branchList, branchList, q.AfterID)
	if len(q.TypeIDs) > 0 {
		b.add(` AND `+r.d.InList("type_id", "?"), r.d.Int64List(q.TypeIDs))
	}
	b.add(` ORDER BY id`)
	if q.Limit > 0 {
		b.add(` LIMIT ?`, q.Limit)
	}
	b.add(`) ORDER BY id, branch`)
	return r.queryObjects(ctx, b.sql(), b.args...)
}

func (r reader) ListValuesIn(ctx context.Context, branches, objectIDs []int64, f store.ValueFilter) ([]store.Value, error) {
	if len(branches) == 0 || len(objectIDs) == 0 {
		return nil, nil
	}
	b := r.newQuery()
	b.add(r.st.selectValues)
	b.whereIn("branch", branches)
	b.whereIn("object_id", objectIDs)
	b.whereValues(f)
	b.add(` ORDER BY ` + valueOrder + `, branch`)
	return r.queryValues(ctx, b.sql(), b.args...)
}
