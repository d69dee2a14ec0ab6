-- Webhook delivery attempts (pkg/webhooks): one row per attempt, written
-- outside write transactions (recording an attempt changes no content and
-- publishes no change event), listed newest first per webhook and pruned
-- by age and by a per-webhook count.
CREATE TABLE webhook_attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id  INTEGER NOT NULL,
    delivery_id TEXT    NOT NULL,
    tx_id       INTEGER NOT NULL,
    branch      INTEGER NOT NULL,
    kind        TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    time_us     INTEGER NOT NULL, -- unix microseconds, UTC
    duration_us INTEGER NOT NULL,
    status      INTEGER NOT NULL, -- HTTP status, 0 = no response
    error       TEXT    NOT NULL,
    outcome     TEXT    NOT NULL
);
CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, id);
CREATE INDEX webhook_attempts_time ON webhook_attempts (time_us);
