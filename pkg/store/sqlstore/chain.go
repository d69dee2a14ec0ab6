package sqlstore

import (
	"context"
	"fmt"
	"strings"

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

// FindObjectsIn is one statement: the objects of the branches whose GUID
// is one of guids, and (UNION) those whose ApiIdentifier is one of
// apiIdentifiers, each searched in its index (branch first): SQLite
// scanned every object of the branches for "guid IN … OR api_identifier
// IN …". Without branches, the branches are the distinct values of
// objects.branch, found by one index seek per branch (allBranches).
func (r reader) FindObjectsIn(ctx context.Context, branches []int64, guids, apiIdentifiers []string) ([]store.Object, error) {
	if len(guids) == 0 && len(apiIdentifiers) == 0 {
		return nil, nil
	}
	var parts []string
	var args []any
	with, inBranches := ``, `branch IN (SELECT branch FROM all_branches WHERE branch IS NOT NULL)`
	if len(branches) > 0 {
		inBranches = r.d.InList("branch", "?")
	} else {
		with = allBranches
	}
	part := func(index, cond string, list any) {
		parts = append(parts, r.st.selectObjects+r.d.IndexedBy(index)+` WHERE `+inBranches+` AND `+cond)
		if len(branches) > 0 {
			args = append(args, r.d.Int64List(branches))
		}
		args = append(args, list)
	}
	if len(guids) > 0 {
		part("objects_guid", r.d.InList("guid", "?"), r.d.StringList(guids))
	}
	if len(apiIdentifiers) > 0 {
		part("objects_api_identifier", `api_identifier IS NOT NULL AND `+r.d.InList("api_identifier", "?"), r.d.StringList(apiIdentifiers))
	}
	b := r.newQuery()
	b.add(with+strings.Join(parts, ` UNION `)+` ORDER BY id, branch`, args...)
	return r.queryObjects(ctx, b.sql(), b.args...)
}

// allBranches is a WITH clause naming all_branches(branch): every branch
// that holds objects, each found by one seek in the primary key (branch,
// id), not by reading every object.
const allBranches = `WITH RECURSIVE all_branches(branch) AS (SELECT MIN(branch) FROM objects UNION ALL ` +
	`SELECT (SELECT MIN(o.branch) FROM objects o WHERE o.branch > a.branch) FROM all_branches a WHERE a.branch IS NOT NULL) `

func (r reader) ListObjectsIn(ctx context.Context, branches []int64, q store.ObjectQuery) ([]store.Object, error) {
	if q.Deleted != nil {
		return nil, fmt.Errorf("%w: ListObjectsIn cannot filter by Deleted", store.ErrInvalidArgument)
	}
	if len(branches) == 0 {
		return nil, nil
	}
	// The inner SELECT picks a page of ids, the outer one every row of them.
	// The objects of one type come from objects_type (branch, type_id, id);
	// of one branch, in id order without sorting (one branch holds an id
	// once), so a page costs its size, not every object of the type.
	inBranches := r.d.InList("branch", "?")
	branchList := r.d.Int64List(branches)
	b := r.newQuery()
	b.add(r.st.selectObjects+` WHERE `+inBranches+` AND id IN (`, branchList)
	from, conds, args := `objects`, []string{}, []any{}
	switch len(q.TypeIDs) {
	case 0:
	case 1:
		from += r.d.IndexedBy("objects_type")
		conds, args = append(conds, `type_id = ?`), append(args, q.TypeIDs[0])
	default:
		conds, args = append(conds, r.d.InList("type_id", "?")), append(args, r.d.Int64List(q.TypeIDs))
	}
	if len(branches) == 1 {
		conds, args = append(conds, `branch = ?`), append(args, branches[0])
	} else {
		conds, args = append(conds, inBranches), append(args, branchList)
	}
	conds, args = append(conds, `id > ?`), append(args, q.AfterID)
	b.add(`SELECT DISTINCT id FROM `+from+` WHERE `+strings.Join(conds, ` AND `)+` ORDER BY id`, args...)
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
