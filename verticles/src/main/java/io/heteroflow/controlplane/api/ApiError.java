package io.heteroflow.controlplane.api;

import io.vertx.core.json.JsonObject;

/**
 * A refusal the client can act on: HTTP status, a stable code, the offending field (when there is one) and
 * a message. Rendered as {@code {"code": …, "field": …, "message": …}}.
 */
public final class ApiError extends RuntimeException {
  private final int status;
  private final String code;
  private final String field;
  private final String currentStatus;

  public ApiError(int status, String code, String field, String message) {
    this(status, code, field, message, null);
  }

  private ApiError(int status, String code, String field, String message, String currentStatus) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.field = field;
    this.currentStatus = currentStatus;
  }

  /** The same refusal, telling the client the task's current state (409 on an illegal transition). */
  public ApiError withCurrentStatus(String status) {
    return new ApiError(this.status, code, field, getMessage(), status);
  }

  /** This refusal of a nested object's field, named by its path from the body ({@code members[3].gpu_required}). */
  public ApiError within(String prefix) {
    if (field == null) {
      return new ApiError(status, code, prefix.replaceAll("\\.$", ""), prefix + " " + getMessage(), currentStatus);
    }
    String message = getMessage();
    String quoted = "'" + field + "'";
    String renamed = message.startsWith(field) ? prefix + message
        : message.contains(quoted) ? message.replaceFirst(java.util.regex.Pattern.quote(quoted),
            java.util.regex.Matcher.quoteReplacement("'" + prefix + field + "'"))
        : message;
    return new ApiError(status, code, prefix + field, renamed, currentStatus);
  }

  public static ApiError badField(String field, String message) {
    return new ApiError(400, "invalid_field", field, field + ": " + message);
  }

  public static ApiError unknownField(String field) {
    return new ApiError(400, "unknown_field", field, "unknown field '" + field + "'");
  }

  public static ApiError notFound(String what) {
    return new ApiError(404, "not_found", null, what + " not found");
  }

  public static ApiError conflict(String message) {
    return new ApiError(409, "conflict", null, message);
  }

  public int status() {
    return status;
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("code", code).put("field", field).put("message", getMessage());
    return currentStatus == null ? json : json.put("current_status", currentStatus);
  }
}
