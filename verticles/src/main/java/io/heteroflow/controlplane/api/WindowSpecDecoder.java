package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.service.ScheduleWindows;
import io.heteroflow.controlplane.service.ScheduleWindows.Action;
import io.heteroflow.controlplane.service.ScheduleWindows.Interval;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Strict decoding of an inference service's {@code windows} object (SPEC §9): {@code {timezone?, open: [{days,
 * from, to}, …], action, scale_to?}}. The timezone is an IANA zone id (default {@code UTC}); {@code open} has 1
 * to {@value #MAX_INTERVALS} intervals, each with distinct days {@code mon}..{@code sun}, {@code from} as HH:mm
 * (00:00–23:59) and {@code to} as HH:mm or {@code 24:00} ({@code to <= from} crosses midnight; {@code to == from}
 * is refused as empty). {@code scale_to} (0–{@value #MAX_SCALE_TO}) is required for {@code scale} and refused
 * otherwise. Every refusal names its field by its full path ({@code windows.open[1].days[0]}).
 */
final class WindowSpecDecoder {
  private WindowSpecDecoder() {}

  static final int MAX_INTERVALS = 32;
  static final int MAX_SCALE_TO = 1024;
  private static final String PREFIX = "windows.";
  private static final Set<String> FIELDS = Set.of("timezone", "open", "action", "scale_to");
  private static final Set<String> INTERVAL_FIELDS = Set.of("days", "from", "to");
  private static final Pattern HH_MM = Pattern.compile("([01][0-9]|2[0-3]):[0-5][0-9]");

  /** The windows {@code given} (the value of the {@code windows} field), or a 400 naming the bad field. */
  static ScheduleWindows decode(JsonObject given) {
    if (given == null) {
      throw ApiError.badField("windows", "must be an object");
    }
    StrictJson json = strict(given, FIELDS, PREFIX);
    String zoneId = read(PREFIX, () -> json.string("timezone", "UTC", 64, null));
    ZoneId zone;
    try {
      zone = ZoneId.of(zoneId);
    } catch (DateTimeException e) {
      throw bad("timezone", "is not a known time zone id such as Europe/Berlin or UTC (was '"
          + StrictJson.printable(zoneId) + "')");
    }
    if (!(json.presentFields().get("open") instanceof JsonArray list)) {
      throw bad("open", (json.has("open") ? "must be" : "is required:") + " a list of {days, from, to}");
    }
    if (list.isEmpty() || list.size() > MAX_INTERVALS) {
      throw bad("open", "must have 1 to " + MAX_INTERVALS + " intervals (had " + list.size() + ")");
    }
    List<Interval> open = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      String path = PREFIX + "open[" + i + "].";
      if (!(list.getValue(i) instanceof JsonObject interval)) {
        throw ApiError.badField(PREFIX + "open[" + i + "]", "must be an object {days, from, to}");
      }
      open.add(interval(interval, path));
    }
    String wire = read(PREFIX, () -> json.requiredString("action", 16, null));
    Action action = Action.fromWire(wire).orElseThrow(() -> bad("action",
        "must be one of pause, scale, stop (was '" + StrictJson.printable(wire) + "')"));
    Integer scaleTo = null;
    if (action == Action.SCALE) {
      if (!json.has("scale_to")) {
        throw bad("scale_to", "is required when action is scale");
      }
      scaleTo = (int) (long) read(PREFIX, () -> json.integer("scale_to", 0, 0, MAX_SCALE_TO));
    } else if (json.has("scale_to")) {
      throw bad("scale_to", "is only allowed when action is scale (action is " + action.wire() + ")");
    }
    return new ScheduleWindows(zone, open, action, scaleTo);
  }

  /** One interval {@code {days, from, to}}, its fields named under {@code path} ({@code windows.open[0].}). */
  private static Interval interval(JsonObject given, String path) {
    StrictJson json = strict(given, INTERVAL_FIELDS, path);
    if (!json.has("days")) {
      throw ApiError.badField(path + "days", "is required: a list of mon, tue, wed, thu, fri, sat, sun");
    }
    List<String> names = read(path, () -> json.stringList("days", 7, 16, true));
    Set<DayOfWeek> days = EnumSet.noneOf(DayOfWeek.class);
    for (int j = 0; j < names.size(); j++) {
      String name = names.get(j);
      String field = path + "days[" + j + "]";
      DayOfWeek day = ScheduleWindows.day(name).orElseThrow(() -> ApiError.badField(field,
          "must be one of mon, tue, wed, thu, fri, sat, sun (was '" + StrictJson.printable(name) + "')"));
      if (!days.add(day)) {
        throw ApiError.badField(path + "days", "must not list a day twice ('" + name + "' repeats)");
      }
    }
    String from = read(path, () -> json.requiredString("from", 16, null));
    if (!HH_MM.matcher(from).matches()) {
      throw ApiError.badField(path + "from", "must be HH:mm, 00:00–23:59 (was '" + StrictJson.printable(from) + "')");
    }
    String to = read(path, () -> json.requiredString("to", 16, null));
    boolean endOfDay = to.equals("24:00");
    if (!endOfDay && !HH_MM.matcher(to).matches()) {
      throw ApiError.badField(path + "to",
          "must be HH:mm (00:00–23:59) or 24:00 (was '" + StrictJson.printable(to) + "')");
    }
    if (to.equals(from)) {
      throw ApiError.badField(path + "to", "must differ from 'from' (" + from
          + "): the interval would be empty; use 00:00–24:00 for a whole day");
    }
    return new Interval(days, LocalTime.parse(from), endOfDay ? LocalTime.MIDNIGHT : LocalTime.parse(to), endOfDay);
  }

  /** {@code given} read strictly: an unknown field is refused by its full path. */
  private static StrictJson strict(JsonObject given, Set<String> known, String path) {
    for (String field : given.fieldNames()) {
      if (!known.contains(field)) {
        throw ApiError.unknownField(path + StrictJson.printable(field));
      }
    }
    return StrictJson.of(given, known::contains);
  }

  /** A StrictJson read whose refusal names the field under {@code path}. */
  private static <T> T read(String path, Supplier<T> reading) {
    try {
      return reading.get();
    } catch (ApiError refused) {
      throw refused.within(path);
    }
  }

  private static ApiError bad(String field, String message) {
    return ApiError.badField(PREFIX + field, message);
  }
}
