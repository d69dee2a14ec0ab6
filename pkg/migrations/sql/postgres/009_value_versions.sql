-- Object history (issue 33): every value version, append-only, written in
-- the transaction that wrote or deleted the value. value NULL = the value
-- was deleted by tx_id. Pruned by age (historyRetention), never updated.
CREATE TABLE value_versions (
    branch       BIGINT NOT NULL,
    object_id    BIGINT NOT NULL,
    tx_id        BIGINT NOT NULL,
    attribute_id BIGINT NOT NULL,
    variant      BIGINT NOT NULL,
    language     BIGINT NOT NULL,
    sort_reverse BIGINT NOT NULL,
    value        JSON, -- json, not jsonb: the text round-trips unchanged
    unit_ref     BIGINT,
    PRIMARY KEY (branch, object_id, tx_id, attribute_id, variant, language, sort_reverse)
);
CREATE INDEX value_versions_tx ON value_versions (tx_id);
-- The values written before this migration become their first version.
INSERT INTO value_versions
    (branch, object_id, tx_id, attribute_id, variant, language, sort_reverse, value, unit_ref)
SELECT branch, object_id, modified_tx, attribute_id, variant, language, sort_reverse, value, unit_ref
FROM object_values;
