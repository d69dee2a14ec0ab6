-- Comments on objects (NovaDB CmsComment). Ids come from their own counter,
-- allocated inside the write transaction like object ids. user_key is the
-- author lower-cased in Go (strings.ToLower), so the user filter matches
-- without case identically on both dialects.
INSERT INTO counters (name, value) VALUES ('comment', 0);

CREATE TABLE comments (
    id          INTEGER PRIMARY KEY,
    branch      INTEGER NOT NULL,
    object_id   INTEGER NOT NULL,
    user_name   TEXT    NOT NULL,
    user_key    TEXT    NOT NULL,
    body        TEXT    NOT NULL,
    deleted     INTEGER NOT NULL DEFAULT 0,
    created_us  INTEGER NOT NULL, -- unix microseconds, UTC
    modified_us INTEGER NOT NULL,
    created_tx  INTEGER NOT NULL,
    modified_tx INTEGER NOT NULL
);
CREATE INDEX comments_branch ON comments (branch, id);
CREATE INDEX comments_object ON comments (object_id, id);
CREATE INDEX comments_user ON comments (user_key, id);
CREATE INDEX comments_modified ON comments (modified_tx);
