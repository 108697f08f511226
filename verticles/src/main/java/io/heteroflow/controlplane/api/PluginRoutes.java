package io.heteroflow.controlplane.api;

import io.heteroflow.protocol.message.Kick;
import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.scheduler.framework.InvalidSettingException;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry.Registration;
import io.heteroflow.controlplane.scheduler.framework.PluginSetting;
import io.heteroflow.controlplane.scheduler.framework.PluginState;
import io.heteroflow.controlplane.store.PluginConfigStore;
import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The scheduler's plugin configuration (SPEC §2.3): the effective set, switching (binpack and spread exclude
 * each other), weights and each plugin's settings, validated against the schema the plugin declares (no route
 * knows any plugin). Changes are persisted in PostgreSQL, and every round builds its plugin set from there, so
 * what {@code GET /scheduler/plugins} shows is what the next round uses.
 */
final class PluginRoutes {
  private static final String WEIGHT = "weight";
  private final Vertx vertx;
  private final PluginConfigStore plugins;
  private final PluginRegistry registry;

  private final AuditTrail trail;

  PluginRoutes(Vertx vertx, PluginConfigStore plugins, PluginRegistry registry, AuditTrail trail) {
    this.trail = trail;
    this.vertx = vertx;
    this.plugins = plugins;
    this.registry = registry;
  }

  void mount(Router api) {
    api.get("/scheduler/plugins").handler(Http.handle(ctx -> effective()));
    api.post("/plugins/:name").putMetadata(RouteGuard.QUERY, List.of("action")).handler(Http.handle(ctx ->
        trail.after(ctx, "plugin.toggle", "plugin/" + ctx.pathParam("name"), toggle(ctx))));
    api.put("/plugins/:name").handler(Http.handle(ctx -> trail.after(ctx, "plugin.configure",
        "plugin/" + ctx.pathParam("name"), configure(ctx))));
  }

  private Future<Reply> effective() {
    return plugins.load().map(registry::build)
        .map(set -> Reply.ok(new JsonObject().put("plugins", describe(set.states()))));
  }

  private Future<Reply> toggle(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    Registration plugin = plugin(ctx);
    String action = ctx.queryParams().get("action");
    if (!"enable".equals(action) && !"disable".equals(action)) {
      throw ApiError.badField("action", "must be enable or disable");
    }
    boolean enable = "enable".equals(action);
    if (plugin.locked()) {
      if (enable) {
        return effective();
      }
      throw locked(plugin);
    }
    return plugins.load().compose(persisted -> {
      Map<String, PluginConfig> current = registry.effective(persisted);
      PluginConfig config = current.get(plugin.name());
      int weight = enable && config.weight() == 0 && plugin.kind().contains("score") ? 1 : config.weight();
      List<PluginConfig> changes = new ArrayList<>();
      changes.add(new PluginConfig(plugin.name(), enable, weight, config.extra()));
      if (enable) {
        registry.exclusivePartner(plugin.name()).map(current::get).ifPresent(partner ->
            changes.add(new PluginConfig(partner.name(), false, partner.weight(), partner.extra())));
      }
      return save(changes);
    });
  }

  /**
   * {@code {weight?, <setting>...}}: the weight and any of the plugin's settings, each checked against the schema
   * the plugin declares (a 400 names the first bad or unknown one); the others keep their values.
   */
  private Future<Reply> configure(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    Registration plugin = plugin(ctx);
    if (plugin.locked()) {
      throw locked(plugin);
    }
    StrictJson json = StrictJson.parse(ctx.body().buffer(), field -> true);
    Map<String, Object> update = new LinkedHashMap<>(json.presentFields());
    update.remove(WEIGHT);
    if (!json.has(WEIGHT) && update.isEmpty()) {
      List<String> names = plugin.settings().stream().map(PluginSetting::name).toList();
      throw ApiError.badField(WEIGHT,
          names.isEmpty() ? "give weight" : "give weight and/or " + String.join(", ", names));
    }
    Integer weight = json.has(WEIGHT) ? (int) json.integer(WEIGHT, 0, 0, 100) : null;
    validated(plugin, Map.of(), update);
    return plugins.load().compose(persisted -> {
      PluginConfig config = registry.effective(persisted).get(plugin.name());
      Map<String, Object> extra = validated(plugin, config.extra(), update);
      return save(List.of(new PluginConfig(plugin.name(), config.enabled(), weight == null ? config.weight() : weight,
          extra)));
    });
  }

  private static Map<String, Object> validated(Registration plugin, Map<String, Object> current,
                                               Map<String, Object> update) {
    try {
      return plugin.definition().settings(current, update);
    } catch (InvalidSettingException bad) {
      String field = StrictJson.printable(bad.setting());
      throw bad.unknown() ? new ApiError(400, "unknown_field", field, field + ": " + bad.getMessage())
          : ApiError.badField(field, bad.getMessage());
    }
  }

  private Future<Reply> save(List<PluginConfig> changes) {
    return plugins.save(changes).compose(v -> {
      vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("plugins changed").toJson());
      return effective();
    });
  }

  private Registration plugin(RoutingContext ctx) {
    String name = ctx.pathParam("name");
    return registry.find(name).orElseThrow(() -> ApiError.notFound("plugin " + name));
  }

  private static ApiError locked(Registration plugin) {
    return new ApiError(409, "plugin_locked", null, plugin.name()
        + " is a correctness filter: it is always on and takes no configuration");
  }

  static JsonArray describe(List<PluginState> states) {
    JsonArray plugins = new JsonArray();
    for (PluginState state : states) {
      plugins.add(new JsonObject().put("name", state.name()).put("kind", state.kind())
          .put("enabled", state.enabled()).put("weight", state.weight()).put("locked", state.locked())
          .put("extra", new JsonObject(new LinkedHashMap<>(state.extra())))
          .put("settings", new JsonArray(state.settings().stream().map(setting -> new JsonObject(setting.describe()))
              .toList())));
    }
    return plugins;
  }
}
