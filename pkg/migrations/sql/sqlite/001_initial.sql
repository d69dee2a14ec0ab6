-- Counters for gapless transaction ids and global object ids. The row lock
-- taken on 'transaction' at Begin serialises writers (see pkg/store).
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO counters (name, value) VALUES ('transaction', 0), ('object', 0);

CREATE TABLE transactions (
    id        INTEGER PRIMARY KEY,
    time_us   INTEGER NOT NULL, -- unix microseconds, UTC
    user_name TEXT    NOT NULL,
    comment   TEXT    NOT NULL,
    branch    INTEGER NOT NULL
);

CREATE TABLE objects (
    branch         INTEGER NOT NULL,
    id             INTEGER NOT NULL,
    type_id        INTEGER NOT NULL,
    guid           TEXT    NOT NULL,
    api_identifier TEXT,
    deleted        INTEGER NOT NULL DEFAULT 0,
    created_tx     INTEGER NOT NULL,
    modified_tx    INTEGER NOT NULL,
    PRIMARY KEY (branch, id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX objects_guid ON objects (branch, guid);
CREATE UNIQUE INDEX objects_api_identifier ON objects (branch, api_identifier)
    WHERE api_identifier IS NOT NULL;
CREATE INDEX objects_type ON objects (branch, type_id, id);
CREATE INDEX objects_modified ON objects (branch, modified_tx);

CREATE TABLE object_values (
    branch       INTEGER NOT NULL,
    object_id    INTEGER NOT NULL,
    attribute_id INTEGER NOT NULL,
    variant      INTEGER NOT NULL,
    language     INTEGER NOT NULL,
    sort_reverse INTEGER NOT NULL,
    value        TEXT    NOT NULL CHECK (json_valid(value)),
    modified_tx  INTEGER NOT NULL,
    PRIMARY KEY (branch, object_id, attribute_id, variant, language, sort_reverse)
) WITHOUT ROWID;
CREATE INDEX object_values_modified ON object_values (branch, modified_tx);

CREATE TABLE outbox (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    tx_id        INTEGER NOT NULL,
    subject      TEXT    NOT NULL,
    msg_id       TEXT    NOT NULL,
    payload      BLOB    NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    leased_until INTEGER NOT NULL DEFAULT 0 -- unix microseconds; 0 = never claimed
);
CREATE INDEX outbox_lease ON outbox (leased_until, id);
