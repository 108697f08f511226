package io.heteroflow.controlplane.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The calendar of schedule windows: open/closed at given instants, the next edge, DST and the wire form. */
class ScheduleWindowsTest {
  private static final String BERLIN = "Europe/Berlin";
  private static final String NEW_YORK = "America/New_York";
  private static final String WEEKDAYS = "{\"days\":[\"mon\",\"tue\",\"wed\",\"thu\",\"fri\"],\"from\":\"08:00\",\"to\":\"20:00\"}";
  private static final String ALL_DAYS = "[\"mon\",\"tue\",\"wed\",\"thu\",\"fri\",\"sat\",\"sun\"]";

  /** Windows in {@code zone} with the given open intervals (JSON objects), action pause. */
  private static ScheduleWindows windows(String zone, String... intervals) {
    return ScheduleWindows.fromJson(new JsonObject("{\"timezone\":\"" + zone + "\",\"open\":["
        + String.join(",", intervals) + "],\"action\":\"pause\"}"));
  }

  private static String interval(String days, String from, String to) {
    return "{\"days\":" + days + ",\"from\":\"" + from + "\",\"to\":\"" + to + "\"}";
  }

  /** An instant: ISO with {@code Z} as given, otherwise a local date-time in {@code zone}. */
  private static Instant at(String zone, String when) {
    return when.endsWith("Z") ? Instant.parse(when)
        : ZonedDateTime.of(LocalDateTime.parse(when), ZoneId.of(zone)).toInstant();
  }

  // 2026-06-15 is a Monday, 2026-06-19 a Friday; 2026-03-08 and 2026-11-01 are Sundays (US DST changes).
  static Stream<Arguments> openCases() {
    String sunNight = interval("[\"sun\"]", "22:00", "06:00");
    String springGap = interval("[\"sun\"]", "02:30", "04:00");
    String fallBack = interval("[\"sun\"]", "00:00", "01:30");
    return Stream.of(
        Arguments.of("weekday 07:59 closed", windows(BERLIN, WEEKDAYS), at(BERLIN, "2026-06-15T07:59"), false),
        Arguments.of("weekday 08:00 open", windows(BERLIN, WEEKDAYS), at(BERLIN, "2026-06-15T08:00"), true),
        Arguments.of("weekday 19:59 open", windows(BERLIN, WEEKDAYS), at(BERLIN, "2026-06-15T19:59"), true),
        Arguments.of("weekday 20:00 closed", windows(BERLIN, WEEKDAYS), at(BERLIN, "2026-06-15T20:00"), false),
        Arguments.of("saturday closed", windows(BERLIN, WEEKDAYS), at(BERLIN, "2026-06-20T10:00"), false),
        Arguments.of("berlin 08:00 is 06:00Z in summer", windows(BERLIN, WEEKDAYS), at(BERLIN, "2026-06-15T06:00:00Z"), true),
        Arguments.of("overnight opens sun 22:00", windows(BERLIN, sunNight), at(BERLIN, "2026-06-21T22:00"), true),
        Arguments.of("overnight before start", windows(BERLIN, sunNight), at(BERLIN, "2026-06-21T21:59"), false),
        Arguments.of("overnight sun->mon 01:00 open", windows(BERLIN, sunNight), at(BERLIN, "2026-06-22T01:00"), true),
        Arguments.of("overnight closes mon 06:00", windows(BERLIN, sunNight), at(BERLIN, "2026-06-22T06:00"), false),
        Arguments.of("overnight not on monday night", windows(BERLIN, sunNight), at(BERLIN, "2026-06-22T23:00"), false),
        Arguments.of("overnight fri->sat 01:00", windows(BERLIN, interval("[\"fri\"]", "22:00", "06:00")),
            at(BERLIN, "2026-06-20T01:00"), true),
        Arguments.of("24:00 open at 23:59", windows(BERLIN, interval("[\"mon\"]", "18:00", "24:00")),
            at(BERLIN, "2026-06-15T23:59:59"), true),
        Arguments.of("24:00 closed at next 00:00", windows(BERLIN, interval("[\"mon\"]", "18:00", "24:00")),
            at(BERLIN, "2026-06-16T00:00"), false),
        Arguments.of("merged adjacent at the seam", windows(BERLIN, interval("[\"mon\"]", "08:00", "12:00"),
            interval("[\"mon\"]", "12:00", "20:00")), at(BERLIN, "2026-06-15T12:00"), true),
        // 02:30 does not exist on 2026-03-08 in New York: it moves forward by the gap to 03:30 EDT = 07:30Z.
        Arguments.of("spring gap before shifted start", windows(NEW_YORK, springGap), at(NEW_YORK, "2026-03-08T07:29:59Z"), false),
        Arguments.of("spring gap shifted start 03:30 EDT", windows(NEW_YORK, springGap), at(NEW_YORK, "2026-03-08T07:30:00Z"), true),
        Arguments.of("spring gap end 04:00 EDT", windows(NEW_YORK, springGap), at(NEW_YORK, "2026-03-08T08:00:00Z"), false),
        // 01:30 happens twice on 2026-11-01 in New York: the earlier offset (EDT) is taken, so the end is 05:30Z.
        Arguments.of("fall back open 00:00 EDT", windows(NEW_YORK, fallBack), at(NEW_YORK, "2026-11-01T04:00:00Z"), true),
        Arguments.of("fall back open 01:29 EDT", windows(NEW_YORK, fallBack), at(NEW_YORK, "2026-11-01T05:29:59Z"), true),
        Arguments.of("fall back closed 01:30 EDT", windows(NEW_YORK, fallBack), at(NEW_YORK, "2026-11-01T05:30:00Z"), false),
        Arguments.of("fall back closed 01:15 EST", windows(NEW_YORK, fallBack), at(NEW_YORK, "2026-11-01T06:15:00Z"), false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("openCases")
  void isOpen(String name, ScheduleWindows windows, Instant now, boolean open) {
    assertEquals(open, windows.isOpen(now), name);
  }

  static Stream<Arguments> edgeCases() {
    String always = interval(ALL_DAYS, "00:00", "24:00");
    return Stream.of(
        Arguments.of("friday 20:00 -> monday 08:00", windows(BERLIN, WEEKDAYS), at(BERLIN, "2026-06-19T20:00"),
            at(BERLIN, "2026-06-22T08:00")),
        Arguments.of("friday 19:00 -> friday 20:00", windows(BERLIN, WEEKDAYS), at(BERLIN, "2026-06-19T19:00"),
            at(BERLIN, "2026-06-19T20:00")),
        Arguments.of("at an edge the next one", windows(BERLIN, WEEKDAYS), at(BERLIN, "2026-06-15T08:00"),
            at(BERLIN, "2026-06-15T20:00")),
        Arguments.of("overnight sun 23:00 -> mon 06:00", windows(BERLIN, interval("[\"sun\"]", "22:00", "06:00")),
            at(BERLIN, "2026-06-21T23:00"), at(BERLIN, "2026-06-22T06:00")),
        Arguments.of("overnight mon 06:00 -> next sun 22:00", windows(BERLIN, interval("[\"sun\"]", "22:00", "06:00")),
            at(BERLIN, "2026-06-22T06:00"), at(BERLIN, "2026-06-28T22:00")),
        Arguments.of("adjacent merged: no edge at 12:00", windows(BERLIN, interval("[\"mon\"]", "08:00", "12:00"),
            interval("[\"mon\"]", "12:00", "20:00")), at(BERLIN, "2026-06-15T09:00"), at(BERLIN, "2026-06-15T20:00")),
        Arguments.of("overlapping merged", windows(BERLIN, interval("[\"mon\"]", "08:00", "14:00"),
            interval("[\"mon\"]", "12:00", "20:00")), at(BERLIN, "2026-06-15T09:00"), at(BERLIN, "2026-06-15T20:00")),
        Arguments.of("24:00 then 00:00 merged", windows(BERLIN, interval("[\"mon\"]", "18:00", "24:00"),
            interval("[\"tue\"]", "00:00", "06:00")), at(BERLIN, "2026-06-15T19:00"), at(BERLIN, "2026-06-16T06:00")),
        Arguments.of("spring gap: start at 03:30 EDT", windows(NEW_YORK, interval("[\"sun\"]", "02:30", "04:00")),
            at(NEW_YORK, "2026-03-08T06:00:00Z"), Instant.parse("2026-03-08T07:30:00Z")),
        Arguments.of("fall back: end at the first 01:30", windows(NEW_YORK, interval("[\"sun\"]", "00:00", "01:30")),
            at(NEW_YORK, "2026-11-01T04:30:00Z"), Instant.parse("2026-11-01T05:30:00Z")),
        Arguments.of("always open: never", windows(BERLIN, always), at(BERLIN, "2026-06-15T12:00"), null),
        Arguments.of("always open across DST: never", windows(NEW_YORK, always), at(NEW_YORK, "2026-03-07T12:00"), null),
        Arguments.of("day and night cover the week: never", windows(BERLIN, interval(ALL_DAYS, "08:00", "20:00"),
            interval(ALL_DAYS, "20:00", "08:00")), at(BERLIN, "2026-06-15T12:00"), null),
        Arguments.of("nothing open: never", windows(BERLIN), at(BERLIN, "2026-06-15T12:00"), null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("edgeCases")
  void nextEdge(String name, ScheduleWindows windows, Instant now, Instant edge) {
    assertEquals(edge, windows.nextEdge(now), name);
    if (edge != null) {
      assertEquals(!windows.isOpen(edge.minusSeconds(1)), windows.isOpen(edge), name + ": the state changes there");
    }
  }

  @Test
  void wireFormIsCanonicalAndRoundTrips() {
    JsonObject given = new JsonObject("{\"timezone\":\"Europe/Berlin\",\"open\":[{\"days\":[\"sun\",\"mon\"],"
        + "\"from\":\"22:00\",\"to\":\"06:00\"},{\"days\":[\"fri\"],\"from\":\"08:30\",\"to\":\"24:00\"}],"
        + "\"action\":\"scale\",\"scale_to\":2}");
    ScheduleWindows windows = ScheduleWindows.fromJson(given);
    assertEquals(ScheduleWindows.Action.SCALE, windows.action());
    assertEquals(2, windows.scaleTo());
    JsonObject wire = windows.toJson();
    assertEquals(List.of("mon", "sun"), wire.getJsonArray("open").getJsonObject(0).getJsonArray("days").getList());
    assertEquals("24:00", wire.getJsonArray("open").getJsonObject(1).getString("to"));
    assertEquals(windows, ScheduleWindows.fromJson(wire));
    assertEquals(wire, ScheduleWindows.fromJson(wire).toJson());
    assertNull(windows(BERLIN, WEEKDAYS).toJson().getValue("scale_to"));
  }
}
