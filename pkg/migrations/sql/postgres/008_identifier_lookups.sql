-- GUIDs and ApiIdentifiers are unique installation-wide, so every write
-- looks up its GUIDs and ApiIdentifiers on all branches
-- (store.ChainReader.FindObjectsIn without branches). objects_guid and
-- objects_api_identifier lead with the branch, which PostgreSQL before 18
-- cannot skip: for an import batch of 1,000 GUIDs it scanned every object
-- (51 ms at 100,000 objects against 7 ms from this index), and with a
-- generic plan compared each object with every GUID of the list (390 ms
-- at 10,000 objects).
CREATE INDEX objects_guid_any ON objects (guid);
CREATE INDEX objects_api_identifier_any ON objects (api_identifier)
    WHERE api_identifier IS NOT NULL;
