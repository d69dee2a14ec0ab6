-- The W3C traceparent of the request that appended the event (pkg/tracing),
-- so the relay publishes it under the writer's trace and one write is one
-- trace from the API through the indexer. Empty when the writer had none.
ALTER TABLE outbox ADD COLUMN trace TEXT NOT NULL DEFAULT '';
