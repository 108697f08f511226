package io.heteroflow.testsupport;

import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import java.util.ArrayList;
import java.util.List;

/** Every route a running router registers, as "METHOD /path/{param}", descending into sub-routers. */
public final class RouterRoutes {
  private RouterRoutes() {}

  public static List<String> of(Router router) {
    List<String> routes = new ArrayList<>();
    collect(router, "", routes);
    return routes;
  }

  private static void collect(Router router, String prefix, List<String> into) {
    for (Route route : router.getRoutes()) {
      String path = route.getPath();
      if (path == null) {
        continue;
      }
      String full = (prefix + path).replaceAll(":([A-Za-z]+)", "{$1}");
      if (route.getSubRouter() != null && (prefix + path).startsWith("/eventbus/")) {
        continue; // the SockJS bridge speaks the SockJS protocol, not REST (README "Event-bus clients")
      }
      if (route.getSubRouter() != null) {
        collect(route.getSubRouter(), prefix + path.replaceAll("/$", ""), into);
      } else if (route.methods() != null) {
        route.methods().forEach(method -> into.add(method.name() + " " + full));
      }
    }
  }
}
