//! The way to a PostgreSQL server before its login: a host's addresses (a TCP host resolved,
//! a socket directory's `.s.PGSQL.PORT` file) and the TLS request (`SSLRequest`, then the
//! handshake when the server agrees), which a connection and its cancel make. The login
//! itself is [`super::login`]'s; the connection [`super::wire`]'s.

use std::io::{self, Read, Write};
use std::net::ToSocketAddrs;
use std::time::{Duration, Instant};

use super::codec::{SSL_ACCEPTED, SSL_REFUSED, ssl_request, tag};
use super::config::{Host, SslMode, socket_file};
use crate::backend::protocol::{Address, Stream};
use crate::backend::tls;
use crate::backend::wire::{WireError, WireResult};

/// The addresses of one host: a TCP host resolved, a socket directory as its `.s.PGSQL.PORT`
/// file.
pub(super) fn addresses(host: &Host, port: u16) -> io::Result<Vec<Address>> {
    match host {
        Host::Tcp(name) => {
            let resolved: Vec<Address> = (name.as_str(), port)
                .to_socket_addrs()?
                .map(Address::Tcp)
                .collect();
            if resolved.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{name} does not resolve"),
                ));
            }
            Ok(resolved)
        }
        Host::Unix(dir) => Ok(vec![Address::Unix(socket_file(dir, port))]),
    }
}

/// What one connection asks of TLS: the rustls configuration, the host name the certificate
/// is checked against, the `sslmode`, and whether the configuration checks the certificate.
pub(super) struct TlsRequest<'a> {
    pub(super) config: &'a std::sync::Arc<rustls::ClientConfig>,
    pub(super) host: &'a str,
    pub(super) mode: SslMode,
    pub(super) verified: bool,
}

/// Ask for TLS (`SSLRequest`) and shake hands when the server agrees; the plain stream when
/// it declines and the mode allows that.
pub(super) fn negotiate_tls(
    mut tcp: std::net::TcpStream,
    tls: &TlsRequest<'_>,
    deadline: Option<Instant>,
) -> WireResult<Stream> {
    let mode = tls.mode;
    let mut request = Vec::with_capacity(8);
    ssl_request(&mut request);
    tcp.write_all(&request)?;
    if let Some(d) = deadline {
        let left = d.saturating_duration_since(Instant::now());
        tcp.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
    }
    // One byte, read straight from the socket: nothing the server sends before the handshake
    // may be taken as if it came over TLS.
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer).map_err(|e| match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => WireError::Io(io::Error::new(
            io::ErrorKind::TimedOut,
            "the server did not answer the TLS request in time (connect timeout)",
        )),
        _ => WireError::Io(e),
    })?;
    match answer[0] {
        SSL_ACCEPTED => {
            let stream = tls::connect(std::sync::Arc::clone(tls.config), tls.host, tcp, deadline)
                .map_err(|e| WireError::Tls(e.to_string()))?;
            Ok(Stream::Tls {
                tls: Box::new(stream),
                verified: tls.verified,
            })
        }
        SSL_REFUSED if mode.requires_tls() => Err(WireError::Tls(format!(
            "the server does not accept TLS, and sslmode={} needs it",
            ssl_mode_name(mode)
        ))),
        SSL_REFUSED => Ok(Stream::Tcp(tcp)),
        // An error instead of an answer (a server out of slots or unable to start a backend,
        // or one too old to know the request): said as such, its text not shown, as libpq
        // does since 17.2: nothing has checked who sent it.
        tag::ERROR_RESPONSE => Err(WireError::Protocol(
            "the server answered the TLS request with an error message (out of connection \
             slots, unable to start a backend, or too old to know the request; its text is \
             not shown, as nothing has checked who sent it): see the server's log"
                .to_string(),
        )),
        other => Err(WireError::Protocol(format!(
            "the server answered the TLS request with {other:#04x}, not 'S' or 'N'"
        ))),
    }
}

/// A host as the user wrote it.
pub(super) fn host_name(host: &Host) -> String {
    match host {
        Host::Tcp(name) => name.clone(),
        Host::Unix(dir) => dir.display().to_string(),
    }
}

/// libpq's name of a mode.
pub(super) fn ssl_mode_name(mode: SslMode) -> &'static str {
    match mode {
        SslMode::Disable => "disable",
        SslMode::Allow => "allow",
        SslMode::Prefer => "prefer",
        SslMode::Require => "require",
        SslMode::VerifyCa => "verify-ca",
        SslMode::VerifyFull => "verify-full",
    }
}
