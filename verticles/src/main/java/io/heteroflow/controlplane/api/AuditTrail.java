package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.AuditStore;
import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.util.regex.Pattern;

/**
 * The audit entry of an admin request: the caller ({@code admin}, or the tenant's name; never a token), the time by
 * the injected clock and the request's {@code X-Request-Id} when it carries a plausible one (1–128 characters of
 * {@code A-Z a-z 0-9 . _ : -}; anything else is left out rather than stored).
 */
final class AuditTrail {
  static final String REQUEST_ID = "X-Request-Id";
  private static final Pattern PLAUSIBLE_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
  private final Clock clock;
  private final AuditStore audit;

  AuditTrail(Clock clock, AuditStore audit) {
    this.clock = clock;
    this.audit = audit;
  }

  /**
   * For actions that are not one transaction of their own (nodes, queues, plugins): records the entry once the
   * action succeeded, then answers its reply. A refused or failed action records nothing.
   */
  Future<Http.Reply> after(RoutingContext ctx, String action, String target, Future<Http.Reply> done) {
    AuditStore.Entry entry = entry(ctx, action, target);
    return done.compose(reply -> audit.record(entry.with("status", reply.status())).map(reply));
  }

  AuditStore.Entry entry(RoutingContext ctx, String action, String target) {
    Principal principal = Http.principal(ctx);
    String requestId = ctx.request().getHeader(REQUEST_ID);
    return new AuditStore.Entry(clock.instant(), principal.admin() ? "admin" : principal.tenant(), action, target,
        null, requestId != null && PLAUSIBLE_ID.matcher(requestId).matches() ? requestId : null);
  }
}
