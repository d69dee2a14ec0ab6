-- The newest transaction that appended an outbox event, per subject
-- (store.Store.LastOutboxTransaction). The outbox itself loses its rows once
-- they are published; this table keeps one row per subject, updated in the
-- transaction that appends the event. Renders compare it with the change
-- events their cache invalidator has handled (pkg/rendercache).
CREATE TABLE outbox_subjects (
    subject TEXT    NOT NULL PRIMARY KEY,
    tx_id   INTEGER NOT NULL
);
