package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.QueueRecord;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** Strict decoding of a queue: {@code {name, parent, weight, guaranteed, max, tenants, caps}}; each refusal names its field. */
final class QueueSpecDecoder {
  private QueueSpecDecoder() {}

  static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
  private static final Set<String> FIELDS = Set.of("name", "parent", "weight", "guaranteed", "max", "tenants", "caps");
  private static final double MAX_GPU_EQ = 10_000_000;

  /** {@code pathName}: the queue a PUT names (the body may repeat it), null for a create. */
  static QueueRecord decode(Buffer body, String pathName) {
    StrictJson json = StrictJson.parse(body, FIELDS);
    String name = pathName == null ? json.requiredString("name", 63, NAME) : json.string("name", pathName, 63, NAME);
    if (!name.equals(pathName) && pathName != null) {
      throw ApiError.badField("name", "must be the queue the path names ('" + pathName + "'), or absent");
    }
    String parent = json.string("parent", QueueRecord.ROOT.equals(name) ? null : QueueRecord.ROOT, 63, NAME);
    int weight = (int) json.integer("weight", 1, 1, 1000);
    double guaranteed = json.number("guaranteed", 0, 0, MAX_GPU_EQ);
    Double max = json.has("max") ? json.number("max", 0, 0, MAX_GPU_EQ) : null;
    if (max != null && max < guaranteed) {
      throw ApiError.badField("max", "must be at least guaranteed (" + guaranteed + " GPU-eq)");
    }
    List<String> tenants = json.stringList("tenants", 1000, 63, false);
    for (int i = 0; i < tenants.size(); i++) {
      if (!NAME.matcher(tenants.get(i)).matches()) {
        throw ApiError.badField("tenants[" + i + "]", "is not a tenant name");
      }
    }
    Integer maxCards = null;
    Integer maxRunning = null;
    JsonObject caps = json.object("caps");
    if (caps != null) {
      try {
        StrictJson read = StrictJson.of(caps, field -> field.equals("max_cards_per_task") || field.equals("max_running"));
        maxCards = read.has("max_cards_per_task") ? (int) read.integer("max_cards_per_task", 0, 1, 128) : null;
        maxRunning = read.has("max_running") ? (int) read.integer("max_running", 0, 1, 1_000_000) : null;
      } catch (ApiError refused) {
        throw refused.within("caps.");
      }
    }
    return new QueueRecord(name, parent, weight, guaranteed, max, maxCards, maxRunning, tenants, null, 0);
  }
}
