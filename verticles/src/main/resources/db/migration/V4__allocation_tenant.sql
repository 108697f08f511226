-- Version 4: each allocation carries its task's tenant, so card occupancy (every scheduling snapshot and every
-- bind's re-check) reads one table by its (node_id, gpu_index) WHERE active index instead of joining tasks.
ALTER TABLE allocations ADD COLUMN tenant text;
UPDATE allocations a SET tenant = t.tenant FROM tasks t WHERE t.id = a.task_id;
ALTER TABLE allocations ALTER COLUMN tenant SET NOT NULL;
