package io.heteroflow.launcher;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** {@code --flag value} arguments of one subcommand; an unknown flag or a missing value is an error. */
final class Args {
  private final Map<String, String> values = new HashMap<>();

  Args(List<String> args, Set<String> known) {
    for (int i = 0; i < args.size(); i++) {
      String flag = args.get(i);
      if (!known.contains(flag)) {
        throw new IllegalArgumentException("unknown option " + flag + " (known: " + String.join(", ", known) + ")");
      }
      if (i + 1 >= args.size()) {
        throw new IllegalArgumentException(flag + " needs a value");
      }
      values.put(flag, args.get(++i));
    }
  }

  String get(String flag, String envVariable, String fallback) {
    if (values.containsKey(flag)) {
      return values.get(flag);
    }
    String fromEnv = envVariable == null ? null : System.getenv(envVariable);
    return fromEnv != null && !fromEnv.isBlank() ? fromEnv : fallback;
  }

  int port(String flag, int fallback) {
    String value = get(flag, null, String.valueOf(fallback));
    try {
      int port = Integer.parseInt(value);
      if (port < 0 || port > 65535) {
        throw new NumberFormatException();
      }
      return port;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " must be a port number (0-65535), was '" + value + "'");
    }
  }
}
