package io.heteroflow.controlplane.scheduler.framework;

import java.util.UUID;

/**
 * A pending preemptor's claim on the node where its victims are stopping (SPEC §6): until it binds, leaves the
 * queue or its time runs out, no task of lower priority may take what that node frees. Read from PostgreSQL into
 * each round's snapshot, and staged there the moment a round plans one.
 */
public record Nomination(UUID taskId, int priority, String nodeId, String plan) {
}
