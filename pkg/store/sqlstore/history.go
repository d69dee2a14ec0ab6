package sqlstore

import (
	"context"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// ValueHistory implements store.History: the limit counts transactions, so
// the versions of the q.Limit newest transactions before q.BeforeTx come
// back whole.
func (s *Store) ValueHistory(ctx context.Context, q store.HistoryQuery) ([]store.ValueVersion, error) {
	before, limit := pageBounds(q.BeforeTx, q.Limit)
	text := s.d.Rebind(`SELECT v.tx_id, v.object_id, v.branch, v.attribute_id, v.language, v.variant,
		v.sort_reverse, ` + s.d.JSONText("v.value") + `, v.unit_ref
		FROM value_versions v
		JOIN (SELECT DISTINCT tx_id FROM value_versions WHERE branch = ? AND object_id = ? AND tx_id < ?
			ORDER BY tx_id DESC LIMIT ?) t ON t.tx_id = v.tx_id
		WHERE v.branch = ? AND v.object_id = ?
		ORDER BY v.tx_id DESC, v.attribute_id, v.variant, v.language, v.sort_reverse`)
	scan := func(rows Rows, v *store.ValueVersion) error {
		var js *string
		err := rows.Scan(&v.Tx, &v.ObjectID, &v.Branch, &v.AttributeID, &v.Language, &v.Variant,
			&v.SortReverse, &js, &v.UnitRef)
		if js == nil {
			v.Deleted = true
		} else {
			v.JSON = []byte(*js)
		}
		return err
	}
	return collect(ctx, s.d, s.q, "value history", scan, text,
		q.Branch, q.ObjectID, before, limit, q.Branch, q.ObjectID)
}

// PruneHistory implements store.History.
func (s *Store) PruneHistory(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	// A version still the newest of its value is kept: reads as of a
	// later transaction need it.
	text := s.d.Rebind(`DELETE FROM value_versions WHERE tx_id IN (
		SELECT id FROM transactions WHERE ` + s.d.TimeColumn("time") + ` < ? ORDER BY id LIMIT ?)
		AND EXISTS (SELECT 1 FROM value_versions n WHERE n.branch = value_versions.branch
			AND n.object_id = value_versions.object_id AND n.attribute_id = value_versions.attribute_id
			AND n.variant = value_versions.variant AND n.language = value_versions.language
			AND n.sort_reverse = value_versions.sort_reverse AND n.tx_id > value_versions.tx_id)`)
	n, err := s.cfg.Write.Exec(ctx, text, s.d.TimeArg(before), limit)
	if err != nil {
		return 0, errorf(s.d, err, "prune history")
	}
	return int(n), nil
}
