package io.heteroflow.controlplane.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Bearer tokens: issued at random ({@code hft_} and 32 URL-safe characters, 192 bits), kept only as their SHA-256
 * (hex), shown afterwards only by a short prefix. The admin token is compared as a digest in constant time. No
 * method here logs, and no caller may log a token: the audit ledger and the logs name tokens by id and prefix.
 */
final class ApiTokens {
  static final String SCHEME = "hft_";
  /** Characters of a token shown in listings: the scheme and 4 of its 32 random characters (24 of 192 bits). */
  static final int PREFIX_LENGTH = 8;
  private static final SecureRandom RANDOM = new SecureRandom();

  private ApiTokens() {}

  /** A new tenant token: returned once to the admin, stored only as {@link #sha256Hex}. */
  static String issue() {
    byte[] bytes = new byte[24];
    RANDOM.nextBytes(bytes);
    return SCHEME + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  static String prefix(String token) {
    return token.substring(0, Math.min(PREFIX_LENGTH, token.length()));
  }

  static byte[] digest(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static String hex(byte[] digest) {
    return HexFormat.of().formatHex(digest);
  }

  /** The hex SHA-256 of a token: what tenant_tokens stores and a request is looked up by. */
  static String sha256Hex(String token) {
    return hex(digest(token));
  }

  /** Whether two tokens are equal, in time independent of where they differ (and of their lengths). */
  static boolean sameToken(byte[] digest, byte[] otherDigest) {
    return MessageDigest.isEqual(digest, otherDigest);
  }
}
