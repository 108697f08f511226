package io.heteroflow.protocol.tls;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * One certificate authority of a HeteroFlow cluster (a P-256 key and its self-signed certificate), issuing the leaf
 * certificates its members and agents present. A cluster has one, trusted by the clustered event bus and the agent
 * bridge alike: lite-member agents need their certificates on the bus. The role in the OU tells them apart where it
 * matters (the agent bridge admits agents only; its clients use only servers with a member's). A leaf names its holder in the subject CN (a node id for an agent) and its role in the OU, and is good for TLS server and
 * client authentication both. X.509 is built by Bouncy Castle; files are PEM (PKCS#8 keys, mode 0600).
 */
public final class CertAuthority {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String SIGNATURE = "SHA256withECDSA";
  private final X509Certificate certificate;
  private final PrivateKey key;

  private CertAuthority(X509Certificate certificate, PrivateKey key) {
    this.certificate = certificate;
    this.key = key;
  }

  /** A new CA named {@code "HeteroFlow <purpose> CA"} ({@code purpose}: members, agents), good for {@code validity}. */
  public static CertAuthority create(String purpose, Duration validity) throws GeneralSecurityException {
    KeyPair pair = newKeyPair();
    X500Name name = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "HeteroFlow")
        .addRDN(BCStyle.CN, "HeteroFlow " + purpose + " CA").build();
    Instant now = Instant.now();
    try {
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, serial(),
          Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(validity)), name, pair.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
          .addExtension(Extension.subjectKeyIdentifier, false, extensions.createSubjectKeyIdentifier(pair.getPublic()));
      return new CertAuthority(sign(builder, pair.getPrivate()), pair.getPrivate());
    } catch (IOException e) {
      throw new GeneralSecurityException("building the CA certificate", e);
    }
  }

  /** A leaf certificate for {@code name} (CN) in {@code role} (OU), with {@code hosts} (DNS names or IPs) as SANs. */
  public Issued issue(String name, String role, List<String> hosts, Duration validity) throws GeneralSecurityException {
    KeyPair pair = newKeyPair();
    X500Name subject = new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, "HeteroFlow")
        .addRDN(BCStyle.OU, role).addRDN(BCStyle.CN, name).build();
    List<GeneralName> names = new ArrayList<>();
    for (String host : hosts) {
      names.add(new GeneralName(isAddress(host) ? GeneralName.iPAddress : GeneralName.dNSName, host));
    }
    Instant now = Instant.now();
    Instant until = now.plus(validity).isAfter(certificate.getNotAfter().toInstant())
        ? certificate.getNotAfter().toInstant() : now.plus(validity);
    try {
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(certificate, serial(),
          Date.from(now.minus(Duration.ofMinutes(5))), Date.from(until), subject, pair.getPublic())
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement))
          .addExtension(Extension.extendedKeyUsage, false,
              new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}))
          .addExtension(Extension.authorityKeyIdentifier, false, extensions.createAuthorityKeyIdentifier(certificate))
          .addExtension(Extension.subjectKeyIdentifier, false, extensions.createSubjectKeyIdentifier(pair.getPublic()));
      if (!names.isEmpty()) {
        builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(GeneralName[]::new)));
      }
      return new Issued(pem(sign(builder, key)), pem(pair.getPrivate()));
    } catch (IOException e) {
      throw new GeneralSecurityException("building the certificate of " + name, e);
    }
  }

  /** This CA's certificate, PEM: what a peer trusts. */
  public String certificatePem() {
    return pem(certificate);
  }

  public X509Certificate certificate() {
    return certificate;
  }

  /** Writes {@code <base>.pem} (certificate) and {@code <base>-key.pem} (key, 0600) into {@code dir}. */
  public void save(Path dir, String base) throws IOException {
    new Issued(certificatePem(), pem(key)).save(dir, base);
  }

  /** Reads a CA written by {@link #save}. */
  public static CertAuthority load(Path dir, String base) throws IOException, GeneralSecurityException {
    X509Certificate certificate = PemFiles.certificates(Files.readString(dir.resolve(base + ".pem"))).get(0);
    return new CertAuthority(certificate, readKey(Files.readString(dir.resolve(base + "-key.pem"))));
  }

  /** A leaf certificate and its key, PEM. */
  public record Issued(String certificatePem, String keyPem) {
    /** Writes {@code <base>.pem} and {@code <base>-key.pem} (mode 0600) into {@code dir}, creating it. */
    public void save(Path dir, String base) throws IOException {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve(base + ".pem"), certificatePem);
      Path keyFile = dir.resolve(base + "-key.pem");
      Files.deleteIfExists(keyFile);
      Files.createFile(keyFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.writeString(keyFile, keyPem);
    }
  }

  private static PrivateKey readKey(String pem) throws IOException {
    try (PEMParser parser = new PEMParser(new StringReader(pem))) {
      Object object = parser.readObject();
      JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
      if (object instanceof PrivateKeyInfo info) {
        return converter.getPrivateKey(info);
      }
      if (object instanceof PEMKeyPair pair) {
        return converter.getKeyPair(pair).getPrivate();
      }
      throw new IOException("not a private key: " + (object == null ? "empty" : object.getClass().getSimpleName()));
    }
  }

  private static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return generator.generateKeyPair();
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer)
      throws GeneralSecurityException {
    try {
      ContentSigner contentSigner = new JcaContentSignerBuilder(SIGNATURE).build(signer);
      return new JcaX509CertificateConverter().getCertificate(builder.build(contentSigner));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException("signing", e);
    }
  }

  private static BigInteger serial() {
    return new BigInteger(127, RANDOM);
  }

  private static boolean isAddress(String host) {
    return host.matches("[0-9.]+") || host.contains(":");
  }

  /** PEM of a certificate or a key (PKCS#8 for keys: what Vert.x's PemKeyCertOptions reads). */
  private static String pem(Object object) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      writer.writeObject(object instanceof PrivateKey key ? new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(key, null)
          : object);
    } catch (IOException e) {
      throw new IllegalStateException("writing PEM to memory", e);
    }
    return out.toString();
  }
}
