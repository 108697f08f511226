package io.heteroflow.protocol.tls;

import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import org.bouncycastle.asn1.x500.RDN;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x500.style.IETFUtils;

/**
 * Who a TLS peer is, read from the leaf certificate it presented (already verified against a CA by the TLS layer):
 * the subject CN is its name (an agent's node id) and the OU its role ({@link #AGENT}, {@link #MEMBER}).
 */
public record PeerIdentity(String name, String role) {
  public static final String AGENT = "agent";
  public static final String MEMBER = "member";

  /** The identity in the first (leaf) certificate of a verified chain; empty without one or without a CN. */
  public static Optional<PeerIdentity> of(List<? extends Certificate> chain) {
    if (chain == null || chain.isEmpty() || !(chain.get(0) instanceof X509Certificate leaf)) {
      return Optional.empty();
    }
    X500Name subject = X500Name.getInstance(leaf.getSubjectX500Principal().getEncoded());
    String name = first(subject, subject.getRDNs(BCStyle.CN));
    return name == null ? Optional.empty() : Optional.of(new PeerIdentity(name, first(subject, subject.getRDNs(BCStyle.OU))));
  }

  private static String first(X500Name subject, RDN[] rdns) {
    return rdns.length == 0 ? null : IETFUtils.valueToString(rdns[0].getFirst().getValue());
  }
}
