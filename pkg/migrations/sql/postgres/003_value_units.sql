-- Values may name a unit (NovaDB CmsValue.unitRef): the id of a typeUnit
-- (30) object. NULL = the value is not unit specific.
ALTER TABLE object_values ADD COLUMN unit_ref BIGINT;
