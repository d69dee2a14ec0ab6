package sqlstore

const (
	objectColumns = `branch, id, type_id, guid, api_identifier, deleted, created_tx, modified_tx`
	valueOrder    = `object_id, attribute_id, variant, language, sort_reverse`
)

// statements holds the statements whose text does not depend on the
// arguments, rendered once for a dialect. The comment beside each lists its
// parameters in order.
// versionColumns are value_versions' columns in the order the statements
// write them; versionKey is its primary key (one version per value and
// transaction).
const (
	versionKey     = `branch, object_id, tx_id, attribute_id, variant, language, sort_reverse`
	versionColumns = versionKey + `, value, unit_ref`
	// objectVersionColumns are object_versions' columns (one version per
	// object row and transaction).
	objectVersionColumns = `branch, id, tx_id, type_id, guid, api_identifier, deleted`
)

type statements struct {
	beginTransaction  string // none; returns the transaction id
	insertTransaction string // id, time, user, comment, branch
	countTransaction  string // none; takes the next id without returning it
	// beginAndInsert takes the next id and writes the record in one
	// statement where the dialect can (ModifyingCTE), else "".
	beginAndInsert        string   // time, user, comment, branch; returns the id
	getTransaction        string   // id
	getTransactions       string   // ids
	lastTransactionID     string   // none
	allocateObjectIDs     string   // n; returns the last id
	allocateCommentID     string   // none; returns the id
	raiseObjectCounter    string   // id
	putObject             string   // branch, id, type, guid, api identifier, deleted, created tx, modified tx
	getObject             string   // branch, id
	getObjects            string   // branch, ids
	findObjects           string   // branch, guids, api identifiers
	deleteObjects         string   // tx, branch, ids
	putValue              string   // branch, object, attribute, variant, language, sort, JSON, unit, tx
	putVersion            string   // branch, object, tx, attribute, variant, language, sort, JSON, unit
	putObjectVersion      string   // branch, id, tx, type, guid, api identifier, deleted
	deleteObjectVersions  string   // tx, branch, ids
	purgeObjectVersions   string   // branch, ids
	purgeBranchObjVersion string   // branch
	purgeValues           string   // branch, object ids
	purgeVersions         string   // branch, object ids
	purgeBranchVersions   string   // branch
	purgeObjects          string   // branch, ids
	purgeBranchValues     string   // branch
	purgeBranchComment    string   // branch
	purgeBranchObjects    string   // branch
	appendOutbox          string   // tx, subject, msg id, payload
	markOutboxSubject     string   // subject, tx
	lastOutboxTx          string   // subject prefix (LIKE pattern)
	ackOutbox             string   // ids
	getObjectsIn          string   // branches, ids
	insertComment         string   // id, branch, object, user, body, created, modified, created tx, modified tx, user key
	updateCommentBody     string   // body, modified, tx, id
	commentDeleted        string   // id
	deleteComment         string   // modified, tx, id
	getComment            string   // id
	allocateJobID         string   // none; returns the id
	insertJob             string   // id, branch, definition, trigger, user, user key, state, doc, created, modified
	updateJob             string   // state, deleted, doc, modified, id
	getJob                string   // id
	insertWebhookAttempts []string // per webhookRows: rows of webhook, delivery, tx, branch, kind, attempt, time, duration µs, status, error, outcome
	selectWebhookAttempts string   // webhook, before id, limit
	pruneWebhookAge       string   // before time, limit
	pruneWebhookCount     string   // webhook, webhook, keep, limit

	// The SELECT … FROM of the queries built per call; they take no
	// parameter.
	selectObjects  string
	selectValues   string
	selectComments string
	selectJobs     string
}

func newStatements(d Dialect) *statements {
	in := func(column string) string { return d.InList(column, "?") }
	t := d.TimeColumn
	selectObjects := `SELECT ` + objectColumns + ` FROM objects`
	commentColumns := `id, branch, object_id, user_name, body, deleted, ` +
		t("created") + `, ` + t("modified") + `, created_tx, modified_tx`
	selectComments := `SELECT ` + commentColumns + ` FROM comments`
	jobColumns := `id, branch, definition_id, trigger_id, user_name, state, deleted, doc, ` +
		t("created") + `, ` + t("modified")
	selectJobs := `SELECT ` + jobColumns + ` FROM jobs`
	webhookColumns := `webhook_id, delivery_id, tx_id, branch, kind, attempt, ` + t("time") +
		`, duration_us, status, error, outcome`
	r := d.Rebind
	beginAndInsert := ""
	if d.ModifyingCTE() {
		beginAndInsert = r(`WITH c AS (UPDATE counters SET value = value + 1 WHERE name = 'transaction' RETURNING value)
			INSERT INTO transactions (id, ` + t("time") + `, user_name, comment, branch)
			SELECT value, ?, ?, ?, ? FROM c RETURNING id`)
	}
	return &statements{
		beginAndInsert:   beginAndInsert,
		beginTransaction: `UPDATE counters SET value = value + 1 WHERE name = 'transaction' RETURNING value`,
		insertTransaction: r(`INSERT INTO transactions (id, ` + t("time") + `, user_name, comment, branch)
			VALUES (?, ?, ?, ?, ?)`),
		countTransaction: `UPDATE counters SET value = value + 1 WHERE name = 'transaction'`,
		getTransaction:   r(`SELECT id, ` + t("time") + `, user_name, comment, branch FROM transactions WHERE id = ?`),
		getTransactions: r(`SELECT id, ` + t("time") + `, user_name, comment, branch FROM transactions
			WHERE ` + in("id") + ` ORDER BY id`),
		lastTransactionID:  `SELECT COALESCE(MAX(id), 0) FROM transactions`,
		allocateObjectIDs:  r(`UPDATE counters SET value = value + ? WHERE name = 'object' RETURNING value`),
		allocateCommentID:  `UPDATE counters SET value = value + 1 WHERE name = 'comment' RETURNING value`,
		raiseObjectCounter: r(`UPDATE counters SET value = ` + d.Greatest("value", "?") + ` WHERE name = 'object'`),
		putObject: r(`INSERT INTO objects (` + objectColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (branch, id) DO UPDATE SET type_id = excluded.type_id, guid = excluded.guid,
				api_identifier = excluded.api_identifier, deleted = excluded.deleted,
				modified_tx = excluded.modified_tx`),
		getObject:  r(selectObjects + ` WHERE branch = ? AND id = ?`),
		getObjects: r(selectObjects + ` WHERE branch = ? AND ` + in("id")),
		findObjects: r(selectObjects + `
			WHERE branch = ? AND (` + in("guid") + ` OR ` + in("api_identifier") + `) ORDER BY id`),
		deleteObjects: r(`UPDATE objects SET deleted = TRUE, modified_tx = ?
			WHERE branch = ? AND deleted = FALSE AND ` + in("id")),
		putValue: r(`INSERT INTO object_values
			(branch, object_id, attribute_id, variant, language, sort_reverse, value, unit_ref, modified_tx)
			VALUES (?, ?, ?, ?, ?, ?, ` + d.JSONParam("?") + `, ?, ?)
			ON CONFLICT (branch, object_id, attribute_id, variant, language, sort_reverse)
			DO UPDATE SET value = excluded.value, unit_ref = excluded.unit_ref, modified_tx = excluded.modified_tx`),
		putVersion: r(`INSERT INTO value_versions (` + versionColumns + `)
			VALUES (?, ?, ?, ?, ?, ?, ?, ` + d.JSONParam("?") + `, ?)
			ON CONFLICT (` + versionKey + `) DO UPDATE SET value = excluded.value, unit_ref = excluded.unit_ref`),
		putObjectVersion: r(`INSERT INTO object_versions (` + objectVersionColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (branch, id, tx_id) DO UPDATE SET type_id = excluded.type_id, guid = excluded.guid,
				api_identifier = excluded.api_identifier, deleted = excluded.deleted`),
		deleteObjectVersions: r(`INSERT INTO object_versions (` + objectVersionColumns + `)
			SELECT branch, id, ?, type_id, guid, api_identifier, TRUE FROM objects
			WHERE branch = ? AND deleted = FALSE AND ` + in("id") + `
			ON CONFLICT (branch, id, tx_id) DO UPDATE SET deleted = TRUE`),
		purgeObjectVersions:   r(`DELETE FROM object_versions WHERE branch = ? AND ` + in("id")),
		purgeBranchObjVersion: r(`DELETE FROM object_versions WHERE branch = ?`),
		purgeValues:           r(`DELETE FROM object_values WHERE branch = ? AND ` + in("object_id")),
		purgeVersions:         r(`DELETE FROM value_versions WHERE branch = ? AND ` + in("object_id")),
		purgeBranchVersions:   r(`DELETE FROM value_versions WHERE branch = ?`),
		purgeObjects:          r(`DELETE FROM objects WHERE branch = ? AND ` + in("id")),
		purgeBranchValues:     r(`DELETE FROM object_values WHERE branch = ?`),
		purgeBranchComment:    r(`DELETE FROM comments WHERE branch = ?`),
		purgeBranchObjects:    r(`DELETE FROM objects WHERE branch = ?`),
		appendOutbox:          r(`INSERT INTO outbox (tx_id, subject, msg_id, payload, trace) VALUES (?, ?, ?, ?, ?)`),
		ackOutbox:             r(`DELETE FROM outbox WHERE ` + in("id")),
		markOutboxSubject: r(`INSERT INTO outbox_subjects (subject, tx_id) VALUES (?, ?)
			ON CONFLICT (subject) DO UPDATE SET tx_id = excluded.tx_id`),
		lastOutboxTx: r(`SELECT COALESCE(MAX(tx_id), 0) FROM outbox_subjects WHERE subject LIKE ? ESCAPE '\'`),
		getObjectsIn: r(selectObjects + ` WHERE ` + in("branch") + ` AND ` + in("id") + ` ORDER BY id, branch`),
		insertComment: r(`INSERT INTO comments (` + commentColumns + `, user_key)
			VALUES (?, ?, ?, ?, ?, FALSE, ?, ?, ?, ?, ?)`),
		updateCommentBody: r(`UPDATE comments SET body = ?, ` + t("modified") + ` = ?, modified_tx = ? WHERE id = ?`),
		commentDeleted:    r(`SELECT deleted FROM comments WHERE id = ?` + d.LockForUpdate()),
		deleteComment:     r(`UPDATE comments SET deleted = TRUE, ` + t("modified") + ` = ?, modified_tx = ? WHERE id = ?`),
		getComment:        r(selectComments + ` WHERE id = ?`),
		allocateJobID:     `UPDATE counters SET value = value + 1 WHERE name = 'job' RETURNING value`,
		insertJob: r(`INSERT INTO jobs (id, branch, definition_id, trigger_id, user_name, user_key, state, doc, ` +
			t("created") + `, ` + t("modified") + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		updateJob:             r(`UPDATE jobs SET state = ?, deleted = ?, doc = ?, ` + t("modified") + ` = ? WHERE id = ?`),
		getJob:                r(selectJobs + ` WHERE id = ?`),
		insertWebhookAttempts: insertWebhookRows(d, webhookColumns),
		selectWebhookAttempts: r(`SELECT id, ` + webhookColumns + ` FROM webhook_attempts
			WHERE webhook_id = ? AND id < ? ORDER BY id DESC LIMIT ?`),
		pruneWebhookAge: r(`DELETE FROM webhook_attempts WHERE id IN (
			SELECT id FROM webhook_attempts WHERE ` + t("time") + ` < ? ORDER BY ` + t("time") + ` LIMIT ?)`),
		pruneWebhookCount: r(`DELETE FROM webhook_attempts WHERE id IN (
			SELECT id FROM webhook_attempts WHERE webhook_id = ? AND id <= (
				SELECT id FROM webhook_attempts WHERE webhook_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)
			ORDER BY id LIMIT ?)`),

		selectObjects: selectObjects,
		selectValues: `SELECT object_id, branch, attribute_id, language, variant, sort_reverse, ` +
			d.JSONText("value") + `, unit_ref, modified_tx FROM object_values`,
		selectComments: selectComments,
		selectJobs:     selectJobs,
	}
}
