package io.heteroflow.protocol;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * An IP address as an agent reports it: a bare literal ({@code 10.0.1.5}, {@code fd00::5}) or with the prefix
 * length of its interface's subnet ({@code 10.0.1.5/24}, {@code fd00::5/64}). {@code ip} is the canonical text
 * of the address (IPv4 dotted decimal, IPv6 in RFC 5952 form: lower case, the longest run of zero groups
 * compressed), so equal addresses have equal text; {@code prefixLength} is null for a host-only address.
 * Parsing reads literals only: no name is ever looked up (a host name is refused, never resolved).
 */
public record NetworkAddress(String ip, Integer prefixLength) {
  private static final Pattern IPV4 = Pattern.compile("(0|[1-9][0-9]{0,2})(\\.(0|[1-9][0-9]{0,2})){3}");
  private static final Pattern HEX_GROUP = Pattern.compile("[0-9A-Fa-f]{1,4}");

  public NetworkAddress {
    byte[] bytes = bytesOf(ip);
    if (bytes == null) {
      throw new IllegalArgumentException("not an IP address: " + ip);
    }
    if (prefixLength != null && (prefixLength < 0 || prefixLength > bytes.length * 8)) {
      throw new IllegalArgumentException("prefix length " + prefixLength + " is not between 0 and " + bytes.length * 8);
    }
    ip = format(bytes);
  }

  /**
   * {@code 10.0.1.5}, {@code 10.0.1.5/24}, {@code fd00::5/64}: an IPv4 prefix 0–32, an IPv6 prefix 0–128. An
   * IllegalArgumentException says what is wrong (not an IP literal, a bad prefix, a zone id).
   */
  public static NetworkAddress parse(String text) {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException("an IP address is required");
    }
    int slash = text.indexOf('/');
    String address = slash < 0 ? text : text.substring(0, slash);
    Integer prefix = null;
    if (slash >= 0) {
      String digits = text.substring(slash + 1);
      if (!digits.matches("0|[1-9][0-9]{0,2}")) {
        throw new IllegalArgumentException("not a prefix length: '" + digits + "' in " + text);
      }
      prefix = Integer.parseInt(digits);
    }
    if (bytesOf(address) == null) {
      throw new IllegalArgumentException("not an IP address (a literal such as 10.0.1.5 or fd00::5, optionally"
          + " with /prefix): " + text);
    }
    return new NetworkAddress(address, prefix);
  }

  /** Whether {@code text} is a bare IP literal (no prefix). */
  public static boolean isIpLiteral(String text) {
    return text != null && bytesOf(text) != null;
  }

  public boolean isIpv6() {
    return ip.indexOf(':') >= 0;
  }

  /** The prefix length that applies: the given one, else the whole address (32 or 128: host only). */
  public int effectivePrefixLength() {
    return prefixLength != null ? prefixLength : (isIpv6() ? 128 : 32);
  }

  /** The network this address is in, in CIDR form: {@code 10.0.1.0/24}; a host-only address is its own /32 (/128). */
  public String subnet() {
    byte[] network = masked(bytesOf(ip), effectivePrefixLength());
    return format(network) + "/" + effectivePrefixLength();
  }

  /**
   * Whether both addresses are in one subnet: the same family and the same prefix length (host-only counts as
   * /32 or /128), and the same network bits. Two addresses that name different prefix lengths are never in one
   * subnet: their networks are not the same network.
   */
  public boolean sameSubnet(NetworkAddress other) {
    return other != null && isIpv6() == other.isIpv6() && effectivePrefixLength() == other.effectivePrefixLength()
        && subnet().equals(other.subnet());
  }

  /** The address as reported: {@code ip} or {@code ip/prefix}. */
  @Override
  public String toString() {
    return prefixLength == null ? ip : ip + "/" + prefixLength;
  }

  private static byte[] masked(byte[] bytes, int prefix) {
    byte[] network = bytes.clone();
    for (int bit = prefix; bit < network.length * 8; bit++) {
      network[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
    }
    return network;
  }

  /** The 4 or 16 bytes of an IP literal, or null when {@code text} is not one. Never a name lookup. */
  private static byte[] bytesOf(String text) {
    if (text == null || text.isEmpty()) {
      return null;
    }
    return text.indexOf(':') >= 0 ? ipv6(text) : ipv4(text);
  }

  private static byte[] ipv4(String text) {
    if (!IPV4.matcher(text).matches()) {
      return null;
    }
    String[] parts = text.split("\\.");
    byte[] bytes = new byte[4];
    for (int i = 0; i < 4; i++) {
      int value = Integer.parseInt(parts[i]);
      if (value > 255) {
        return null;
      }
      bytes[i] = (byte) value;
    }
    return bytes;
  }

  /** Hex groups separated by ':', at most one '::', optionally ending in an IPv4 literal (::ffff:10.0.0.1). */
  private static byte[] ipv6(String text) {
    int gap = text.indexOf("::");
    if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
      return null;
    }
    String head = gap < 0 ? text : text.substring(0, gap);
    String tail = gap < 0 ? "" : text.substring(gap + 2);
    int[] headGroups = groups(head, gap < 0);
    int[] tailGroups = groups(tail, true);
    if (headGroups == null || tailGroups == null) {
      return null;
    }
    int total = headGroups.length + tailGroups.length;
    if (gap < 0 ? total != 8 : total > 7) {
      return null;
    }
    byte[] bytes = new byte[16];
    for (int i = 0; i < headGroups.length; i++) {
      put(bytes, i, headGroups[i]);
    }
    for (int i = 0; i < tailGroups.length; i++) {
      put(bytes, 8 - tailGroups.length + i, tailGroups[i]);
    }
    return bytes;
  }

  private static void put(byte[] bytes, int group, int value) {
    bytes[group * 2] = (byte) (value >>> 8);
    bytes[group * 2 + 1] = (byte) value;
  }

  /** The 16-bit groups of one side of '::' (an IPv4 literal last, where allowed, counts as two); null if malformed. */
  private static int[] groups(String side, boolean ipv4Allowed) {
    if (side.isEmpty()) {
      return new int[0];
    }
    String[] parts = side.split(":", -1);
    int[] groups = new int[parts.length + 1];
    int count = 0;
    for (int i = 0; i < parts.length; i++) {
      if (i == parts.length - 1 && ipv4Allowed && parts[i].indexOf('.') >= 0) {
        byte[] v4 = ipv4(parts[i]);
        if (v4 == null) {
          return null;
        }
        groups[count++] = (v4[0] & 0xff) << 8 | (v4[1] & 0xff);
        groups[count++] = (v4[2] & 0xff) << 8 | (v4[3] & 0xff);
      } else if (HEX_GROUP.matcher(parts[i]).matches()) {
        groups[count++] = Integer.parseInt(parts[i], 16);
      } else {
        return null;
      }
    }
    return java.util.Arrays.copyOf(groups, count);
  }

  private static String format(byte[] bytes) {
    if (bytes.length == 4) {
      return (bytes[0] & 0xff) + "." + (bytes[1] & 0xff) + "." + (bytes[2] & 0xff) + "." + (bytes[3] & 0xff);
    }
    int[] groups = new int[8];
    for (int i = 0; i < 8; i++) {
      groups[i] = (bytes[i * 2] & 0xff) << 8 | (bytes[i * 2 + 1] & 0xff);
    }
    int bestStart = -1;
    int bestLength = 1; // RFC 5952: a single zero group is not compressed
    for (int start = 0; start < 8; start++) {
      int length = 0;
      while (start + length < 8 && groups[start + length] == 0) {
        length++;
      }
      if (length > bestLength) {
        bestStart = start;
        bestLength = length;
      }
    }
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      if (i == bestStart) {
        text.append("::");
        i += bestLength - 1;
        continue;
      }
      if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
        text.append(':');
      }
      text.append(Integer.toHexString(groups[i]));
    }
    return text.toString().toLowerCase(Locale.ROOT);
  }
}
