-- Counters for gapless transaction ids and global object ids. The row lock
-- taken on 'transaction' at Begin serialises writers (see pkg/store).
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO counters (name, value) VALUES ('transaction', 0), ('object', 0);

CREATE TABLE transactions (
    id        BIGINT PRIMARY KEY,
    time      TIMESTAMPTZ NOT NULL,
    user_name TEXT        NOT NULL,
    comment   TEXT        NOT NULL,
    branch    BIGINT      NOT NULL
);

CREATE TABLE objects (
    branch         BIGINT  NOT NULL,
    id             BIGINT  NOT NULL,
    type_id        BIGINT  NOT NULL,
    guid           TEXT    NOT NULL,
    api_identifier TEXT,
    deleted        BOOLEAN NOT NULL DEFAULT FALSE,
    created_tx     BIGINT  NOT NULL,
    modified_tx    BIGINT  NOT NULL,
    PRIMARY KEY (branch, id)
);
CREATE UNIQUE INDEX objects_guid ON objects (branch, guid);
CREATE UNIQUE INDEX objects_api_identifier ON objects (branch, api_identifier)
    WHERE api_identifier IS NOT NULL;
CREATE INDEX objects_type ON objects (branch, type_id, id);
CREATE INDEX objects_modified ON objects (branch, modified_tx);

CREATE TABLE object_values (
    branch       BIGINT NOT NULL,
    object_id    BIGINT NOT NULL,
    attribute_id BIGINT NOT NULL,
    variant      BIGINT NOT NULL,
    language     BIGINT NOT NULL,
    sort_reverse BIGINT NOT NULL,
    value        JSON   NOT NULL, -- json, not jsonb: the text round-trips unchanged
    modified_tx  BIGINT NOT NULL,
    PRIMARY KEY (branch, object_id, attribute_id, variant, language, sort_reverse)
);
CREATE INDEX object_values_modified ON object_values (branch, modified_tx);

CREATE TABLE outbox (
    id           BIGSERIAL PRIMARY KEY,
    tx_id        BIGINT      NOT NULL,
    subject      TEXT        NOT NULL,
    msg_id       TEXT        NOT NULL,
    payload      BYTEA       NOT NULL,
    attempts     INTEGER     NOT NULL DEFAULT 0,
    leased_until TIMESTAMPTZ -- NULL = never claimed
);
