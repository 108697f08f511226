package io.heteroflow.protocol.message;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The golden samples of docs/event-bus.md are the protocol: each decodes with its record's {@code fromJson} and
 * encodes back to the same JSON, and every message of {@link Messages#READERS} has one.
 */
class MessageGoldenSamplesTest {
  private static final Pattern SAMPLE = Pattern.compile("<!-- golden: (\\w+) -->\\s*```json\\n(.*?)\\n```",
      Pattern.DOTALL);

  static Map<String, JsonObject> samples() throws IOException {
    String doc = Files.readString(Path.of("..", "docs", "event-bus.md"));
    Map<String, JsonObject> samples = new LinkedHashMap<>();
    Matcher matcher = SAMPLE.matcher(doc);
    while (matcher.find()) {
      samples.put(matcher.group(1), new JsonObject(matcher.group(2)));
    }
    return samples;
  }

  @TestFactory
  Iterable<DynamicTest> everySampleRoundTrips() throws IOException {
    return samples().entrySet().stream().map(sample -> DynamicTest.dynamicTest(sample.getKey(), () -> {
      var reader = Messages.READERS.get(sample.getKey());
      assertTrue(reader != null, "no message is called " + sample.getKey());
      JsonObject encoded = reader.apply(sample.getValue()).toJson();
      assertEquals(sample.getValue(), encoded, sample.getKey() + " did not round-trip");
      assertEquals(BusMessage.VERSION, encoded.getInteger("v"));
    })).toList();
  }

  @Test
  void everyMessageHasAGoldenSample() throws IOException {
    assertEquals(Messages.READERS.keySet(), samples().keySet());
  }
}
