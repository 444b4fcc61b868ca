//! TLS for both protocol clients, through rustls (no OpenSSL): what a connection asks of the
//! server's certificate ([`TlsPolicy`]), the handshake over an open TCP stream, and what was
//! negotiated ([`TlsInfo`], the record `run.json` keeps).
//!
//! Each protocol maps its own settings onto one policy: PostgreSQL's `sslmode`, `sslrootcert`,
//! `sslcert` and `sslkey`, MySQL's `ssl-mode`, `ssl-ca`, `ssl-cert` and `ssl-key`. The
//! upgrade itself (`SSLRequest`, `CLIENT_SSL`) stays in the protocol's client.

use std::io;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::deadline::Deadlined;
use crate::results::target::TlsInfo;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct};
use rustls::{RootCertStore, SignatureScheme, StreamOwned};

/// What a connection checks of the server's certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// Encrypt, but trust any certificate (libpq's `require`, MySQL's `REQUIRED`).
    Nothing,
    /// The certificate chains to a trusted root; the host name is not checked
    /// (`verify-ca`, `VERIFY_CA`).
    Chain,
    /// The chain and the host name (`verify-full`, `VERIFY_IDENTITY`).
    ChainAndName,
}

/// Where the trusted roots come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Roots {
    /// None given: only [`Verify::Nothing`] works.
    None,
    /// The certificates of a PEM file (`sslrootcert=PATH`, `ssl-ca=PATH`).
    File(PathBuf),
    /// The operating system's store (`sslrootcert=system`).
    System,
}

/// How one connection sets up TLS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsPolicy {
    /// What is checked of the server's certificate.
    pub verify: Verify,
    /// The trusted roots for [`Verify::Chain`] and [`Verify::ChainAndName`].
    pub roots: Roots,
    /// A client certificate chain and its key (PEM files), when the server asks for one.
    pub client_cert: Option<(PathBuf, PathBuf)>,
}

/// A TLS session over TCP.
pub type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// The crypto provider: `ring`, so that nothing links OpenSSL or needs cmake.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn invalid(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

impl TlsPolicy {
    /// The rustls client configuration of this policy (reads the root and client files).
    pub fn client_config(&self) -> io::Result<ClientConfig> {
        let provider = provider();
        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(format!("TLS: {e}")))?;
        let algorithms = provider.signature_verification_algorithms;
        let verifier: Arc<dyn ServerCertVerifier> = match self.verify {
            Verify::Nothing => Arc::new(AnyCertificate(algorithms)),
            Verify::Chain | Verify::ChainAndName => {
                let roots = Arc::new(self.root_store()?);
                let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                    .build()
                    .map_err(|e| invalid(format!("TLS roots: {e}")))?;
                Arc::new(ChainVerifier {
                    webpki,
                    check_name: self.verify == Verify::ChainAndName,
                })
            }
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        match &self.client_cert {
            None => Ok(builder.with_no_client_auth()),
            Some((cert, key)) => {
                let chain = read_certs(cert)?;
                let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                    invalid(format!("cannot read the client key {}: {e}", key.display()))
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| invalid(format!("the client certificate: {e}")))
            }
        }
    }

    fn root_store(&self) -> io::Result<RootCertStore> {
        let mut store = RootCertStore::empty();
        match &self.roots {
            Roots::None => {
                return Err(invalid(
                    "a certificate check needs trusted roots: give a CA file (sslrootcert= \
                     for PostgreSQL, ssl-ca= for MySQL) or sslrootcert=system"
                        .to_string(),
                ));
            }
            Roots::File(path) => {
                for cert in read_certs(path)? {
                    store.add(cert).map_err(|e| {
                        invalid(format!("a certificate of {}: {e}", path.display()))
                    })?;
                }
            }
            Roots::System => {
                let found = rustls_native_certs::load_native_certs();
                for cert in found.certs {
                    // A system store holds some certificates rustls cannot use; skip them.
                    let _ = store.add(cert);
                }
                if store.is_empty() {
                    return Err(invalid(
                        "sslrootcert=system: the system's certificate store is empty or \
                         unreadable (install ca-certificates, or give a CA file)"
                            .to_string(),
                    ));
                }
            }
        }
        Ok(store)
    }
}

/// Shake hands over `tcp` as a client of `host` (the name or address the URL gave, which
/// [`Verify::ChainAndName`] checks the certificate against). Blocking, and done by
/// `deadline` when one is given.
pub fn connect(
    config: Arc<ClientConfig>,
    host: &str,
    tcp: TcpStream,
    deadline: Option<Instant>,
) -> io::Result<TlsStream> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| invalid(format!("TLS: '{host}' is not a host name: {e}")))?;
    let conn = ClientConnection::new(config, name).map_err(|e| invalid(format!("TLS: {e}")))?;
    let mut stream = StreamOwned::new(conn, tcp);
    while stream.conn.is_handshaking() {
        // Every read of the handshake ends by the deadline, so a server that trickles its
        // handshake a byte at a time cannot stretch it.
        let mut sock = Deadlined {
            stream: &mut stream.sock,
            deadline,
            overdue: "the TLS handshake did not finish in time (connect timeout)",
        };
        stream.conn.complete_io(&mut sock).map_err(|e| {
            if e.kind() == io::ErrorKind::TimedOut {
                e
            } else {
                tls_error(e)
            }
        })?;
    }
    Ok(stream)
}

/// A read's error on a TLS session as one line: rustls says a close without `close_notify`
/// with a docs.rs link for the program's author; the user is told the server closed.
pub fn read_error(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        return io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection (without ending its TLS session)",
        );
    }
    e
}

/// A handshake failure as one line that says what to fix.
fn tls_error(e: io::Error) -> io::Error {
    let e = read_error(e);
    let certificate = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .and_then(|r| match r {
            rustls::Error::InvalidCertificate(c) => Some(c.clone()),
            _ => None,
        });
    let hint = match certificate {
        Some(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => {
            ": the server's certificate is not for this host name (connect by the name it was \
             issued for, or use verify-ca / VERIFY_CA)"
        }
        Some(CertificateError::UnknownIssuer) => {
            ": the server's certificate is not signed by the given CA (check sslrootcert= / \
             ssl-ca=)"
        }
        Some(CertificateError::Expired | CertificateError::ExpiredContext { .. }) => {
            ": the server's certificate has expired"
        }
        Some(CertificateError::Other(other)) if is_ca_as_end_entity(&other) => {
            ": the server shows a CA certificate as its own (a self-signed certificate \
             made as a CA): give the server a certificate signed by that CA (made with \
             basicConstraints=CA:FALSE), and keep the CA's file as sslrootcert= / ssl-ca="
        }
        _ => "",
    };
    io::Error::new(e.kind(), format!("TLS handshake failed: {e}{hint}"))
}

/// The `tls-server-end-point` channel binding of a session (RFC 5929): the hash of the
/// server's certificate ([`end_point_hash`]). `None` when the server showed no certificate,
/// or one whose signature names no hash PostgreSQL binds to.
pub fn server_end_point(conn: &ClientConnection) -> Option<Vec<u8>> {
    let cert = conn.peer_certificates()?.first()?;
    end_point_hash(cert.as_ref()).map(|h| h.digest(cert.as_ref()))
}

/// A hash a certificate's channel binding is made with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndPointHash {
    /// SHA-224.
    Sha224,
    /// SHA-256 (also for MD5 and SHA-1 signatures).
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
}

impl EndPointHash {
    /// The hash of `der`.
    pub fn digest(self, der: &[u8]) -> Vec<u8> {
        use sha2::Digest;
        match self {
            EndPointHash::Sha224 => sha2::Sha224::digest(der).to_vec(),
            EndPointHash::Sha256 => sha2::Sha256::digest(der).to_vec(),
            EndPointHash::Sha384 => sha2::Sha384::digest(der).to_vec(),
            EndPointHash::Sha512 => sha2::Sha512::digest(der).to_vec(),
        }
    }
}

/// The hash of a certificate's `tls-server-end-point` binding, as PostgreSQL computes it
/// (`be_tls_get_certificate_hash` in `be-secure-openssl.c`, RFC 5929 section 4.1): the hash
/// of the certificate's own signature algorithm, read from its `signatureAlgorithm` field
/// (for RSA-PSS, the hash in its parameters, SHA-1 when absent), with MD5 and SHA-1 made
/// SHA-256. `None` for a signature without a hash ibench binds with (Ed25519, Ed448, where
/// PostgreSQL fails too; SHA-3) or a certificate that does not parse.
pub fn end_point_hash(cert_der: &[u8]) -> Option<EndPointHash> {
    // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }
    let (certificate, _) = der_element(cert_der, 0x30)?;
    let (_tbs, rest) = der_any(certificate)?;
    let (algorithm, _) = der_element(rest, 0x30)?;
    // AlgorithmIdentifier ::= SEQUENCE { algorithm OBJECT IDENTIFIER, parameters ANY }
    let (oid, params) = der_element(algorithm, 0x06)?;
    match oid {
        oid::RSA_PSS => pss_hash(params),
        _ => signature_hash(oid),
    }
}

/// The object identifiers of signature and hash algorithms (their DER content).
mod oid {
    const RSA: [u8; 8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 1, 1];
    const fn rsa(n: u8) -> [u8; 9] {
        [
            RSA[0], RSA[1], RSA[2], RSA[3], RSA[4], RSA[5], RSA[6], RSA[7], n,
        ]
    }
    pub const MD5_RSA: &[u8] = &rsa(4);
    pub const SHA1_RSA: &[u8] = &rsa(5);
    pub const RSA_PSS: &[u8] = &rsa(10);
    pub const SHA256_RSA: &[u8] = &rsa(11);
    pub const SHA384_RSA: &[u8] = &rsa(12);
    pub const SHA512_RSA: &[u8] = &rsa(13);
    pub const SHA224_RSA: &[u8] = &rsa(14);
    pub const ECDSA_SHA1: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 4, 1];
    pub const ECDSA_SHA224: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 4, 3, 1];
    pub const ECDSA_SHA256: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 4, 3, 2];
    pub const ECDSA_SHA384: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 4, 3, 3];
    pub const ECDSA_SHA512: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 4, 3, 4];
    pub const DSA_SHA1: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x38, 4, 3];
    pub const DSA_SHA224: &[u8] = &[0x60, 0x86, 0x48, 1, 0x65, 3, 4, 3, 1];
    pub const DSA_SHA256: &[u8] = &[0x60, 0x86, 0x48, 1, 0x65, 3, 4, 3, 2];
    pub const SHA1: &[u8] = &[0x2B, 0x0E, 3, 2, 0x1A];
    pub const SHA256: &[u8] = &[0x60, 0x86, 0x48, 1, 0x65, 3, 4, 2, 1];
    pub const SHA384: &[u8] = &[0x60, 0x86, 0x48, 1, 0x65, 3, 4, 2, 2];
    pub const SHA512: &[u8] = &[0x60, 0x86, 0x48, 1, 0x65, 3, 4, 2, 3];
    pub const SHA224: &[u8] = &[0x60, 0x86, 0x48, 1, 0x65, 3, 4, 2, 4];
    pub const MD5: &[u8] = &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 2, 5];
}

/// The binding's hash of a signature algorithm (not RSA-PSS) or of a hash algorithm.
fn signature_hash(algorithm: &[u8]) -> Option<EndPointHash> {
    use EndPointHash::*;
    Some(match algorithm {
        oid::MD5_RSA | oid::SHA1_RSA | oid::ECDSA_SHA1 | oid::DSA_SHA1 | oid::MD5 | oid::SHA1 => {
            Sha256
        }
        oid::SHA224_RSA | oid::ECDSA_SHA224 | oid::DSA_SHA224 | oid::SHA224 => Sha224,
        oid::SHA256_RSA | oid::ECDSA_SHA256 | oid::DSA_SHA256 | oid::SHA256 => Sha256,
        oid::SHA384_RSA | oid::ECDSA_SHA384 | oid::SHA384 => Sha384,
        oid::SHA512_RSA | oid::ECDSA_SHA512 | oid::SHA512 => Sha512,
        _ => return None,
    })
}

/// The hash of RSA-PSS parameters: `RSASSA-PSS-params ::= SEQUENCE { hashAlgorithm [0]
/// AlgorithmIdentifier DEFAULT sha1, ... }` (RFC 4055); SHA-1, made SHA-256, when absent.
fn pss_hash(params: &[u8]) -> Option<EndPointHash> {
    let Some((fields, _)) = der_element(params, 0x30) else {
        return signature_hash(oid::SHA1);
    };
    match der_element(fields, 0xA0) {
        Some((hash, _)) => {
            let (algorithm, _) = der_element(hash, 0x30)?;
            let (oid, _) = der_element(algorithm, 0x06)?;
            signature_hash(oid)
        }
        None => signature_hash(oid::SHA1),
    }
}

/// The content of the DER element at the start of `b` when its tag is `tag`, and what
/// follows it.
fn der_element(b: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    if *b.first()? != tag {
        return None;
    }
    der_any(b)
}

/// The content of the DER element at the start of `b`, whatever its tag, and what follows.
fn der_any(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let first = *b.get(1)?;
    let (len, start) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let n = usize::from(first & 0x7F);
        if n == 0 || n > 4 {
            return None;
        }
        let len = b
            .get(2..2 + n)?
            .iter()
            .fold(0usize, |acc, byte| (acc << 8) | usize::from(*byte));
        (len, 2 + n)
    };
    let end = start.checked_add(len)?;
    Some((b.get(start..end)?, b.get(end..)?))
}

/// Whether a certificate error is webpki's `CaUsedAsEndEntity`.
fn is_ca_as_end_entity(other: &rustls::OtherError) -> bool {
    format!("{other:?}").contains("CaUsedAsEndEntity")
}

/// What a TLS session negotiated.
pub fn info(conn: &ClientConnection) -> TlsInfo {
    let version = match conn.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
        Some(v) => format!("{v:?}"),
        None => String::new(),
    };
    let cipher = conn
        .negotiated_cipher_suite()
        .map(|s| format!("{:?}", s.suite()))
        .unwrap_or_default();
    TlsInfo { version, cipher }
}

fn read_certs(path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            invalid(format!(
                "cannot read the certificates of {}: {e}",
                path.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(invalid(format!(
            "{} holds no PEM certificate",
            path.display()
        )));
    }
    Ok(certs)
}

/// Trusts any certificate, but still checks the handshake's signatures with it.
#[derive(Debug)]
struct AnyCertificate(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// The chain check of rustls, with the host-name check optional (`verify-ca`).
#[derive(Debug)]
struct ChainVerifier {
    webpki: Arc<WebPkiServerVerifier>,
    check_name: bool,
}

impl ServerCertVerifier for ChainVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_without_roots_names_the_fix() {
        let policy = TlsPolicy {
            verify: Verify::ChainAndName,
            roots: Roots::None,
            client_cert: None,
        };
        let e = policy.client_config().unwrap_err().to_string();
        assert!(e.contains("sslrootcert="), "{e}");
        let missing = TlsPolicy {
            roots: Roots::File(PathBuf::from("/nonexistent/ca.pem")),
            ..policy
        };
        let e = missing.client_config().unwrap_err().to_string();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
        let any = TlsPolicy {
            verify: Verify::Nothing,
            roots: Roots::None,
            client_cert: None,
        };
        assert!(any.client_config().is_ok());
    }

    /// `openssl` in `dir` with `args`; its success asserted.
    fn openssl(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("openssl")
            .current_dir(dir)
            .args(args)
            .output()
            .expect("openssl runs (apt-get install openssl)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Each signature algorithm's certificate, made here with `openssl`, binds with the hash
    /// PostgreSQL uses: its signature's (RSA-PSS: from the parameters), SHA-256 for MD5 and
    /// SHA-1, none for Ed25519; an OID of SHA-384 elsewhere in the certificate (here an
    /// extension) does not count.
    #[test]
    fn channel_binding_hashes_with_the_certificates_signature_hash() {
        let dir = std::env::temp_dir().join(format!("ibench-end-point-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        openssl(&dir, &["genpkey", "-algorithm", "RSA", "-out", "rsa.key"]);
        openssl(
            &dir,
            &[
                "genpkey",
                "-algorithm",
                "EC",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-out",
                "ec.key",
            ],
        );
        openssl(
            &dir,
            &["genpkey", "-algorithm", "ED25519", "-out", "ed.key"],
        );
        let sha384_oid_in_an_extension = "1.2.3.4=DER:06092A864886F70D01010C";
        let cases: [(&str, &[&str], Option<EndPointHash>); 11] = [
            ("rsa.key", &["-md5"], Some(EndPointHash::Sha256)),
            ("rsa.key", &["-sha1"], Some(EndPointHash::Sha256)),
            ("rsa.key", &["-sha224"], Some(EndPointHash::Sha224)),
            ("rsa.key", &["-sha256"], Some(EndPointHash::Sha256)),
            ("rsa.key", &["-sha384"], Some(EndPointHash::Sha384)),
            ("rsa.key", &["-sha512"], Some(EndPointHash::Sha512)),
            (
                "rsa.key",
                &["-sha384", "-sigopt", "rsa_padding_mode:pss"],
                Some(EndPointHash::Sha384),
            ),
            ("ec.key", &["-sha224"], Some(EndPointHash::Sha224)),
            ("ec.key", &["-sha384"], Some(EndPointHash::Sha384)),
            ("ed.key", &[], None),
            (
                "rsa.key",
                &["-sha256", "-addext", sha384_oid_in_an_extension],
                Some(EndPointHash::Sha256),
            ),
        ];
        for (i, (key, extra, want)) in cases.iter().enumerate() {
            let out = format!("cert{i}.der");
            let mut args = vec!["req", "-x509", "-key", key, "-subj", "/CN=t", "-days", "1"];
            args.extend(["-outform", "DER", "-out", &out]);
            args.extend_from_slice(extra);
            openssl(&dir, &args);
            let der = std::fs::read(dir.join(&out)).unwrap();
            assert_eq!(end_point_hash(&der), *want, "{key} {extra:?}");
        }
        assert_eq!(
            end_point_hash(&[0x30, 0x84, 0xFF]),
            None,
            "no panic on junk"
        );
        assert_eq!(
            EndPointHash::Sha224.digest(b"").len(),
            28,
            "SHA-224 is 28 bytes"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
