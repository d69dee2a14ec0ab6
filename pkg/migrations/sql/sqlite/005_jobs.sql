-- Jobs (NovaDB CmsJob). Ids come from their own counter, allocated inside
-- the write transaction like comment ids. The columns are what the job
-- listing filters on; doc is the rest of the job as JSON (pkg/jobs owns
-- its shape). user_key is the creator lower-cased in Go.
INSERT INTO counters (name, value) VALUES ('job', 0);

CREATE TABLE jobs (
    id            INTEGER PRIMARY KEY,
    branch        INTEGER NOT NULL,
    definition_id INTEGER NOT NULL,
    trigger_id    INTEGER NOT NULL DEFAULT 0,
    user_name     TEXT    NOT NULL,
    user_key      TEXT    NOT NULL,
    state         INTEGER NOT NULL,
    deleted       INTEGER NOT NULL DEFAULT 0,
    doc           TEXT    NOT NULL,
    created_us    INTEGER NOT NULL, -- unix microseconds, UTC
    modified_us   INTEGER NOT NULL
);
CREATE INDEX jobs_branch ON jobs (branch, id);
CREATE INDEX jobs_definition ON jobs (definition_id, id);
CREATE INDEX jobs_state ON jobs (state, id);
CREATE INDEX jobs_user ON jobs (user_key, id);
