package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/cmsplatform/cms/pkg/store"
)

// ValueHistory implements store.History: the limit counts transactions, so
// the versions of the q.Limit newest transactions before q.BeforeTx come
// back whole.
func (s *Store) ValueHistory(ctx context.Context, q store.HistoryQuery) ([]store.ValueVersion, error) {
	before, limit := pageBounds(q.BeforeTx, q.Limit)
	text := s.d.Rebind(`SELECT ` + s.versionSelect() + `
		FROM value_versions v
		JOIN (SELECT DISTINCT tx_id FROM value_versions WHERE branch = ? AND object_id = ? AND tx_id < ?
			ORDER BY tx_id DESC LIMIT ?) t ON t.tx_id = v.tx_id
		WHERE v.branch = ? AND v.object_id = ?
		ORDER BY ` + versionOrder)
	return collect(ctx, s.d, s.q, "value history", s.scanVersion, text,
		q.Branch, q.ObjectID, before, limit, q.Branch, q.ObjectID)
}

// versionOrder orders value_versions v newest transaction first.
const versionOrder = `v.tx_id DESC, v.attribute_id, v.variant, v.language, v.sort_reverse`

// versionSelect is the column list of value_versions v that scanVersion
// scans.
func (s *Store) versionSelect() string {
	return `v.tx_id, v.object_id, v.branch, v.attribute_id, v.language, v.variant, v.sort_reverse, ` +
		s.d.JSONText("v.value") + `, v.unit_ref`
}

func (s *Store) scanVersion(rows Rows, v *store.ValueVersion) error {
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

// ObjectHistory implements store.History in three queries: the page's
// transactions (those of the row and of the values together), then the
// row versions and the value versions they wrote.
func (s *Store) ObjectHistory(ctx context.Context, q store.HistoryQuery) (store.ObjectChanges, error) {
	before, limit := pageBounds(q.BeforeTx, q.Limit)
	txText := s.d.Rebind(`SELECT tx_id FROM (
			SELECT tx_id FROM value_versions WHERE branch = ? AND object_id = ? AND tx_id < ?
			UNION SELECT tx_id FROM object_versions WHERE branch = ? AND id = ? AND tx_id < ?) u
		ORDER BY tx_id DESC LIMIT ?`)
	scanTx := func(rows Rows, id *int64) error { return rows.Scan(id) }
	txs, err := collect(ctx, s.d, s.q, "object history", scanTx, txText,
		q.Branch, q.ObjectID, before, q.Branch, q.ObjectID, before, limit)
	if err != nil || len(txs) == 0 {
		return store.ObjectChanges{}, err
	}
	list := s.d.Int64List(txs)
	rowText := s.d.Rebind(`SELECT ` + objectVersionColumns + ` FROM object_versions
		WHERE branch = ? AND id = ? AND ` + s.d.InList("tx_id", "?") + ` ORDER BY tx_id DESC`)
	rows, err := collect(ctx, s.d, s.q, "object row history", scanObjectVersion, rowText, q.Branch, q.ObjectID, list)
	if err != nil {
		return store.ObjectChanges{}, err
	}
	valText := s.d.Rebind(`SELECT ` + s.versionSelect() + ` FROM value_versions v
		WHERE v.branch = ? AND v.object_id = ? AND ` + s.d.InList("v.tx_id", "?") + ` ORDER BY ` + versionOrder)
	vals, err := collect(ctx, s.d, s.q, "object value history", s.scanVersion, valText, q.Branch, q.ObjectID, list)
	if err != nil {
		return store.ObjectChanges{}, err
	}
	return store.ObjectChanges{Transactions: txs, Rows: rows, Values: vals}, nil
}

// scanObjectVersion scans objectVersionColumns into an Object whose
// CreatedTx and ModifiedTx are the version's transaction.
func scanObjectVersion(rows Rows, o *store.Object) error {
	var api sql.NullString
	err := rows.Scan(&o.Branch, &o.ID, &o.ModifiedTx, &o.TypeID, &o.GUID, &api, &o.Deleted)
	o.APIIdentifier, o.CreatedTx = api.String, o.ModifiedTx
	return err
}

// ObjectsAsOf implements store.History.
func (s *Store) ObjectsAsOf(ctx context.Context, branches, ids []int64, asOf int64) ([]store.Object, error) {
	if len(branches) == 0 || len(ids) == 0 {
		return nil, nil
	}
	// The newest version at or before asOf per row: one pass over the
	// rows' versions (ROW_NUMBER), whatever their number.
	text := s.d.Rebind(`SELECT branch, id, type_id, guid, api_identifier, deleted, first_tx, tx_id FROM (
			SELECT o.branch, o.id, o.type_id, o.guid, o.api_identifier, o.deleted, o.tx_id,
				MIN(o.tx_id) OVER (PARTITION BY o.branch, o.id) AS first_tx,
				ROW_NUMBER() OVER (PARTITION BY o.branch, o.id ORDER BY o.tx_id DESC) AS newest
			FROM object_versions o
			WHERE ` + s.d.InList("o.branch", "?") + ` AND ` + s.d.InList("o.id", "?") + ` AND o.tx_id <= ?) w
		WHERE newest = 1
		ORDER BY id, branch`)
	return collect(ctx, s.d, s.q, "objects as of", scanObject, text,
		s.d.Int64List(branches), s.d.Int64List(ids), asOf)
}

// ValuesAsOf implements store.History.
func (s *Store) ValuesAsOf(ctx context.Context, branches, objectIDs []int64, asOf int64) ([]store.Value, error) {
	if len(branches) == 0 || len(objectIDs) == 0 {
		return nil, nil
	}
	// The newest version at or before asOf per value, unless it removed
	// the value: one pass over the objects' versions (ROW_NUMBER).
	text := s.d.Rebind(`SELECT object_id, branch, attribute_id, language, variant, sort_reverse,
			` + s.d.JSONText("value") + `, unit_ref, tx_id FROM (
			SELECT v.*, ROW_NUMBER() OVER (PARTITION BY v.branch, v.object_id, v.attribute_id, v.variant,
				v.language, v.sort_reverse ORDER BY v.tx_id DESC) AS newest
			FROM value_versions v
			WHERE ` + s.d.InList("v.branch", "?") + ` AND ` + s.d.InList("v.object_id", "?") + ` AND v.tx_id <= ?) w
		WHERE newest = 1 AND value IS NOT NULL
		ORDER BY object_id, attribute_id, variant, language, sort_reverse, branch`)
	return collect(ctx, s.d, s.q, "values as of", scanValue, text,
		s.d.Int64List(branches), s.d.Int64List(objectIDs), asOf)
}

// PruneHistory implements store.History: one query finds the batch's
// newest transaction, two delete the superseded versions of the batch.
func (s *Store) PruneHistory(ctx context.Context, before time.Time, afterTx int64, limit int) (int, int64, error) {
	if limit <= 0 {
		return 0, 0, nil
	}
	var last int64
	err := s.cfg.Write.QueryRow(ctx, s.d.Rebind(`SELECT COALESCE(MAX(id), 0) FROM (SELECT id FROM transactions
		WHERE `+s.d.TimeColumn("time")+` < ? AND id > ? ORDER BY id LIMIT ?) b`),
		s.d.TimeArg(before), afterTx, limit).Scan(&last)
	if err != nil {
		return 0, 0, errorf(s.d, err, "prune history")
	}
	if last == 0 {
		return 0, 0, nil
	}
	// A version still the newest of its value or row is kept: reads as of
	// a later transaction need it.
	values := s.d.Rebind(`DELETE FROM value_versions WHERE tx_id > ? AND tx_id <= ?
		AND EXISTS (SELECT 1 FROM value_versions n WHERE n.branch = value_versions.branch
			AND n.object_id = value_versions.object_id AND n.attribute_id = value_versions.attribute_id
			AND n.variant = value_versions.variant AND n.language = value_versions.language
			AND n.sort_reverse = value_versions.sort_reverse AND n.tx_id > value_versions.tx_id)`)
	n, err := s.cfg.Write.Exec(ctx, values, afterTx, last)
	if err != nil {
		return 0, 0, errorf(s.d, err, "prune history")
	}
	rows := s.d.Rebind(`DELETE FROM object_versions WHERE tx_id > ? AND tx_id <= ?
		AND EXISTS (SELECT 1 FROM object_versions n WHERE n.branch = object_versions.branch
			AND n.id = object_versions.id AND n.tx_id > object_versions.tx_id)`)
	m, err := s.cfg.Write.Exec(ctx, rows, afterTx, last)
	if err != nil {
		return 0, 0, errorf(s.d, err, "prune object history")
	}
	return int(n + m), last, nil
}

// TransactionObjectIDs implements store.History: the row and the value
// versions of the transaction, each found by its tx_id index.
func (s *Store) TransactionObjectIDs(ctx context.Context, branch, tx int64) ([]int64, error) {
	text := s.d.Rebind(`SELECT id FROM (SELECT id FROM object_versions WHERE tx_id = ? AND branch = ?
		UNION SELECT object_id AS id FROM value_versions WHERE tx_id = ? AND branch = ?) AS written ORDER BY id`)
	return collect(ctx, s.d, s.q, "objects of a transaction", func(rows Rows, id *int64) error { return rows.Scan(id) },
		text, tx, branch, tx, branch)
}
