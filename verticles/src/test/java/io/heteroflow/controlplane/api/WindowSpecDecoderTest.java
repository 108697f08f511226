package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.service.ScheduleWindows;
import io.vertx.core.json.JsonObject;
import java.time.ZoneId;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Strict decoding of {@code windows}: each bad input is a 400 naming its field by its full path. */
class WindowSpecDecoderTest {
  private static final String OK = "{\"days\":[\"mon\"],\"from\":\"08:00\",\"to\":\"20:00\"}";

  private static String spec(String open, String rest) {
    return "{\"open\":[" + open + "]," + rest + "}";
  }

  private static String at(String from, String to) {
    return "{\"days\":[\"mon\"],\"from\":" + from + ",\"to\":" + to + "}";
  }

  static Stream<Arguments> refusals() {
    String pause = "\"action\":\"pause\"";
    return Stream.of(
        Arguments.of("{\"timezone\":\"Mars/Olympus\",\"open\":[" + OK + "]," + pause + "}", "windows.timezone", "time zone"),
        Arguments.of("{\"timezone\":7,\"open\":[" + OK + "]," + pause + "}", "windows.timezone", "string"),
        Arguments.of("{" + pause + "}", "windows.open", "required"),
        Arguments.of("{\"open\":{}," + pause + "}", "windows.open", "list"),
        Arguments.of(spec("", pause), "windows.open", "1 to 32"),
        Arguments.of(spec(String.join(",", java.util.Collections.nCopies(33, OK)), pause), "windows.open", "1 to 32"),
        Arguments.of(spec("\"mon\"", pause), "windows.open[0]", "object"),
        Arguments.of(spec(OK + ",{\"days\":[\"monday\"],\"from\":\"08:00\",\"to\":\"20:00\"}", pause),
            "windows.open[1].days[0]", "mon, tue"),
        Arguments.of(spec("{\"days\":[1],\"from\":\"08:00\",\"to\":\"20:00\"}", pause), "windows.open[0].days[0]", "string"),
        Arguments.of(spec("{\"from\":\"08:00\",\"to\":\"20:00\"}", pause), "windows.open[0].days", "required"),
        Arguments.of(spec("{\"days\":[],\"from\":\"08:00\",\"to\":\"20:00\"}", pause), "windows.open[0].days", "empty"),
        Arguments.of(spec("{\"days\":\"mon\",\"from\":\"08:00\",\"to\":\"20:00\"}", pause), "windows.open[0].days", "array"),
        Arguments.of(spec("{\"days\":[\"mon\",\"tue\",\"mon\"],\"from\":\"08:00\",\"to\":\"20:00\"}", pause),
            "windows.open[0].days", "twice"),
        Arguments.of(spec(at("\"8:00\"", "\"20:00\""), pause), "windows.open[0].from", "HH:mm"),
        Arguments.of(spec(at("\"24:00\"", "\"20:00\""), pause), "windows.open[0].from", "HH:mm"),
        Arguments.of(spec(at("\"08:60\"", "\"20:00\""), pause), "windows.open[0].from", "HH:mm"),
        Arguments.of(spec(at("800", "\"20:00\""), pause), "windows.open[0].from", "string"),
        Arguments.of(spec("{\"days\":[\"mon\"],\"to\":\"20:00\"}", pause), "windows.open[0].from", "required"),
        Arguments.of(spec(at("\"08:00\"", "\"24:01\""), pause), "windows.open[0].to", "24:00"),
        Arguments.of(spec(at("\"08:00\"", "\"25:00\""), pause), "windows.open[0].to", "24:00"),
        Arguments.of(spec("{\"days\":[\"mon\"],\"from\":\"08:00\"}", pause), "windows.open[0].to", "required"),
        Arguments.of(spec(at("\"08:00\"", "\"08:00\""), pause), "windows.open[0].to", "empty"),
        Arguments.of(spec("{\"days\":[\"mon\"],\"from\":\"08:00\",\"to\":\"20:00\",\"hours\":12}", pause),
            "windows.open[0].hours", "unknown field"),
        Arguments.of("{\"tz\":\"UTC\",\"open\":[" + OK + "]," + pause + "}", "windows.tz", "unknown field"),
        Arguments.of("{\"open\":[" + OK + "]}", "windows.action", "required"),
        Arguments.of(spec(OK, "\"action\":\"sleep\""), "windows.action", "pause, scale, stop"),
        Arguments.of(spec(OK, "\"action\":\"scale\""), "windows.scale_to", "required"),
        Arguments.of(spec(OK, "\"action\":\"scale\",\"scale_to\":2000"), "windows.scale_to", "between 0 and 1024"),
        Arguments.of(spec(OK, "\"action\":\"scale\",\"scale_to\":-1"), "windows.scale_to", "between 0 and 1024"),
        Arguments.of(spec(OK, "\"action\":\"scale\",\"scale_to\":\"3\""), "windows.scale_to", "integer"),
        Arguments.of(spec(OK, "\"action\":\"scale\",\"scale_to\":1.5"), "windows.scale_to", "integer"),
        Arguments.of(spec(OK, "\"action\":\"pause\",\"scale_to\":1"), "windows.scale_to", "only"),
        Arguments.of(spec(OK, "\"action\":\"stop\",\"scale_to\":0"), "windows.scale_to", "only"));
  }

  @ParameterizedTest(name = "{1}: {0}")
  @MethodSource("refusals")
  void refusesNamingTheField(String given, String field, String says) {
    ApiError refused = assertThrows(ApiError.class, () -> WindowSpecDecoder.decode(new JsonObject(given)));
    JsonObject error = refused.toJson();
    assertEquals(400, refused.status());
    assertEquals(field, error.getString("field"), error.encode());
    assertTrue(error.getString("message").contains(field), error.encode());
    assertTrue(error.getString("message").contains(says), error.encode());
  }

  @Test
  void acceptsAFullSpecAndRoundTrips() {
    JsonObject given = new JsonObject("{\"timezone\":\"Europe/Berlin\",\"open\":[{\"days\":[\"fri\",\"mon\",\"tue\"],"
        + "\"from\":\"08:00\",\"to\":\"12:00\"},{\"days\":[\"sun\"],\"from\":\"22:00\",\"to\":\"06:00\"},"
        + "{\"days\":[\"sat\"],\"from\":\"00:00\",\"to\":\"24:00\"}],\"action\":\"scale\",\"scale_to\":3}");
    ScheduleWindows windows = WindowSpecDecoder.decode(given);
    assertEquals(ZoneId.of("Europe/Berlin"), windows.timezone());
    assertEquals(3, windows.open().size());
    assertEquals(ScheduleWindows.Action.SCALE, windows.action());
    assertEquals(3, windows.scaleTo());
    JsonObject wire = windows.toJson();
    assertEquals(windows, ScheduleWindows.fromJson(wire));
    assertEquals(windows, WindowSpecDecoder.decode(wire));
    assertEquals("[\"mon\",\"tue\",\"fri\"]", wire.getJsonArray("open").getJsonObject(0).getJsonArray("days").encode());
  }

  @Test
  void timezoneDefaultsToUtc() {
    ScheduleWindows windows = WindowSpecDecoder.decode(new JsonObject(spec(OK, "\"action\":\"stop\"")));
    assertEquals(ZoneId.of("UTC"), windows.timezone());
    assertEquals("UTC", windows.toJson().getString("timezone"));
  }
}
