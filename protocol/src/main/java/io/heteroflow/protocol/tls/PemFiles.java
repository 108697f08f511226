package io.heteroflow.protocol.tls;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;

/** Certificates read from PEM text (one or a chain). */
public final class PemFiles {
  private PemFiles() {}

  public static List<X509Certificate> certificates(String pem) throws GeneralSecurityException {
    CertificateFactory factory = CertificateFactory.getInstance("X.509");
    List<X509Certificate> certificates = factory.generateCertificates(
        new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII))).stream()
        .map(X509Certificate.class::cast).toList();
    if (certificates.isEmpty()) {
      throw new GeneralSecurityException("no certificate in the PEM text");
    }
    return certificates;
  }
}
