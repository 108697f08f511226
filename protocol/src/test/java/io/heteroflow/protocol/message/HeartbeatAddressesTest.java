package io.heteroflow.protocol.message;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.NetworkAddress;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A heartbeat's internal addresses (bare or CIDR) and public addresses (bare), each checked strictly. */
class HeartbeatAddressesTest {

  private static JsonObject beat(JsonArray internal, JsonArray external) {
    JsonObject json = new JsonObject().put("node_id", "n-1").put("internal_ips", internal);
    return external == null ? json : json.put("public_ips", external);
  }

  @Test
  void internalAddressesMayCarryTheirPrefixAndPublicOnesDefaultToNone() {
    Heartbeat beat = Heartbeat.fromJson(beat(new JsonArray().add("10.0.1.5/24").add("10.0.9.1").add("fd00::5/64"),
        null));
    assertEquals(List.of("10.0.1.5/24", "10.0.9.1", "fd00::5/64"), beat.internalIps());
    assertEquals(List.of(), beat.publicIps(), "public_ips left out: none");
    assertEquals(List.of(new NetworkAddress("10.0.1.5", 24), new NetworkAddress("10.0.9.1", null),
        new NetworkAddress("fd00::5", 64)), beat.internalAddresses());
    assertEquals(new JsonArray(), beat.toJson().getJsonArray("public_ips"));
  }

  @Test
  void publicAddressesRoundTrip() {
    Heartbeat beat = Heartbeat.fromJson(beat(new JsonArray().add("10.0.1.5/24"),
        new JsonArray().add("203.0.113.7").add("2001:db8::7")));
    assertEquals(List.of("203.0.113.7", "2001:db8::7"), beat.publicIps());
    assertEquals(List.of(new NetworkAddress("203.0.113.7", null), new NetworkAddress("2001:db8::7", null)),
        beat.publicAddresses());
    Heartbeat again = Heartbeat.fromJson(beat.toJson());
    assertEquals(beat, again);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "[\"10.0.1.5/24\",\"10.0.2.5\",\"gpu-07.internal\"] | []                 | internal_ips[2]: not an IP address",
      "[\"10.0.1.5/33\"]                                 | []                 | internal_ips[0]: prefix length 33",
      "[\"fd00::5/129\"]                                 | []                 | internal_ips[0]: prefix length 129",
      "[\"10.0.1.5/x\"]                                  | []                 | internal_ips[0]: not a prefix length",
      "[\"300.0.0.1\"]                                   | []                 | internal_ips[0]: not an IP address",
      "[\"fe80::1%eth0\"]                                | []                 | internal_ips[0]: not an IP address",
      "[\"10.0.1.5\", 7]                                 | []                 | internal_ips[1]: a string is required",
      "[\"10.0.1.5\"]                                    | [\"203.0.113.7/32\"] | public_ips[0]: a bare IP address",
      "[\"10.0.1.5\"]                                    | [\"203.0.113.7\",\"\"] | public_ips[1]: an IP address",
      "[\"10.0.1.5\"]                                    | [\"example.com\"]  | public_ips[0]: not an IP address"})
  void aBadEntryIsABadRequestNamingIt(String internal, String external, String expected) {
    ReplyException refused = assertThrows(ReplyException.class,
        () -> Heartbeat.fromJson(beat(new JsonArray(internal), new JsonArray(external))));
    assertEquals(FailureCode.BAD_REQUEST, FailureCode.of(refused));
    assertTrue(refused.getMessage().startsWith(expected), refused.getMessage());
  }

  @Test
  void publicIpsMustBeAnArray() {
    ReplyException refused = assertThrows(ReplyException.class,
        () -> Heartbeat.fromJson(new JsonObject().put("node_id", "n").put("public_ips", "203.0.113.7")));
    assertTrue(refused.getMessage().startsWith("public_ips: a JSON array is required"), refused.getMessage());
  }
}
