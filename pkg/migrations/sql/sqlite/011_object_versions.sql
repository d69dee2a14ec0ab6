-- Object history (issue 33), the rows beside the values of 009: every
-- object row a transaction wrote (created, restored, deleted, given an
-- ApiIdentifier) is one version, append-only, written in that transaction.
-- Pruned with value_versions (historyRetention), never updated.
CREATE TABLE object_versions (
    branch         INTEGER NOT NULL,
    id             INTEGER NOT NULL,
    tx_id          INTEGER NOT NULL,
    type_id        INTEGER NOT NULL,
    guid           TEXT    NOT NULL,
    api_identifier TEXT,
    deleted        INTEGER NOT NULL,
    PRIMARY KEY (branch, id, tx_id)
) WITHOUT ROWID;
CREATE INDEX object_versions_tx ON object_versions (tx_id);
-- The rows written before this migration: a live version at their creation
-- and, when they changed since, their current state at their last change.
INSERT INTO object_versions (branch, id, tx_id, type_id, guid, api_identifier, deleted)
SELECT branch, id, created_tx, type_id, guid, api_identifier, 0 FROM objects WHERE created_tx < modified_tx;
INSERT INTO object_versions (branch, id, tx_id, type_id, guid, api_identifier, deleted)
SELECT branch, id, modified_tx, type_id, guid, api_identifier, deleted FROM objects;
