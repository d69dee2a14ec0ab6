-- Object history (issue 33): every value version, append-only, written in
-- the transaction that wrote or deleted the value. value NULL = the value
-- was deleted by tx_id. Pruned by age (historyRetention), never updated.
CREATE TABLE value_versions (
    branch       INTEGER NOT NULL,
    object_id    INTEGER NOT NULL,
    tx_id        INTEGER NOT NULL,
    attribute_id INTEGER NOT NULL,
    variant      INTEGER NOT NULL,
    language     INTEGER NOT NULL,
    sort_reverse INTEGER NOT NULL,
    value        TEXT    CHECK (value IS NULL OR json_valid(value)),
    unit_ref     INTEGER,
    PRIMARY KEY (branch, object_id, tx_id, attribute_id, variant, language, sort_reverse)
) WITHOUT ROWID;
CREATE INDEX value_versions_tx ON value_versions (tx_id);
-- The values written before this migration become their first version.
INSERT INTO value_versions
    (branch, object_id, tx_id, attribute_id, variant, language, sort_reverse, value, unit_ref)
SELECT branch, object_id, modified_tx, attribute_id, variant, language, sort_reverse, value, unit_ref
FROM object_values;
