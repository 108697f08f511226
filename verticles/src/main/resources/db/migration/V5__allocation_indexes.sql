-- Version 5: card occupancy must be read through allocations_active_by_card (node_id, gpu_index) WHERE active.
-- With allocations_by_task also partial on "active", stale statistics (taken when few allocations were active)
-- made the planner walk every active allocation through the task index and filter by node: 80 ms instead of
-- well under 1 ms at 12,000 active allocations (measured with EXPLAIN ANALYZE in the 5,000-node benchmark).
-- The task index covers every row instead, so only the card index matches an occupancy query; and statistics
-- of this fast-growing table are refreshed after 2 % of its rows change rather than 10 %.
DROP INDEX allocations_by_task;
CREATE INDEX allocations_by_task ON allocations (task_id);
ALTER TABLE allocations SET (autovacuum_analyze_scale_factor = 0.02);
