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

/// A handshake failure as one line that says what to fix.
fn tls_error(e: io::Error) -> io::Error {
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
             made as a CA): give the server a certificate signed by that CA, or use \
             sslmode=require / ssl-mode=REQUIRED, which check nothing"
        }
        _ => "",
    };
    io::Error::new(e.kind(), format!("TLS handshake failed: {e}{hint}"))
}

/// The `tls-server-end-point` channel binding of a session (RFC 5929): the hash of the
/// server's certificate, with the hash of its signature algorithm, SHA-256 for MD5 and SHA-1
/// (and for any other algorithm but SHA-384 and SHA-512, as PostgreSQL computes it). `None`
/// when the server showed no certificate.
pub fn server_end_point(conn: &ClientConnection) -> Option<Vec<u8>> {
    use sha2::{Digest, Sha256, Sha384, Sha512};
    let cert = conn.peer_certificates()?.first()?;
    let der: &[u8] = cert.as_ref();
    // The DER of the algorithm identifiers' OIDs (tag 06, length, value).
    const SHA384: [&[u8]; 2] = [
        &[6, 9, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 1, 1, 12], // sha384WithRSAEncryption
        &[6, 8, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 4, 3, 3],        // ecdsa-with-SHA384
    ];
    const SHA512: [&[u8]; 2] = [
        &[6, 9, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 1, 1, 13], // sha512WithRSAEncryption
        &[6, 8, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 4, 3, 4],        // ecdsa-with-SHA512
    ];
    let holds = |oid: &[u8]| der.windows(oid.len()).any(|w| w == oid);
    Some(if SHA384.iter().any(|o| holds(o)) {
        Sha384::digest(der).to_vec()
    } else if SHA512.iter().any(|o| holds(o)) {
        Sha512::digest(der).to_vec()
    } else {
        Sha256::digest(der).to_vec()
    })
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
}
