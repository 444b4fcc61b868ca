//! URLs: the one parser (`scheme://[user[:password]@]hosts[/path][?query]` split into its
//! parts; [`Url`], a `--url` split once), a server URL's parts owned ([`ServerUrl`]: what the
//! password file fills in for the client, what the backends complete, and what renders the
//! text messages show), the redaction of passwords (what `run.json`, messages and errors
//! show), and percent-encoding. The backends' settings, the Postgres environment completion
//! and the sampler's "is the server on this host?" all read URLs through it.

/// A server URL split into its parts (borrowed from the URL's text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlParts<'a> {
    /// `postgres://`, `mysql://`, ... (with the `://`).
    pub scheme: &'a str,
    /// What comes before the last `@` of the authority (`user` or `user:password`).
    pub userinfo: Option<&'a str>,
    /// One host or several, comma-separated, each with an optional port.
    pub hosts: &'a str,
    /// After the first `/` of the rest (the database), without that `/`.
    pub path: &'a str,
    /// After the `?`, without it.
    pub query: Option<&'a str>,
}

impl<'a> UrlParts<'a> {
    /// Split `url`; `None` for a URL without `://` (e.g. `sqlite:PATH`). The userinfo ends at
    /// the last `@` that is not inside the query, so a password holding `/`, `@` or `?` stays
    /// in it whole; the query starts at the first `?` after the userinfo.
    ///
    /// Which `@` is inside the query: one after a `?` that starts a `key=` parameter
    /// (`postgres://h/db?user=bob@corp` has no userinfo). A `?` not followed by `key=`
    /// (`postgres://u:pa?ss@h/db`) is taken as part of the password: splitting there, as
    /// this parser once did, put the rest of the password in the host and the query, where
    /// redaction and error messages showed it. An `@` before the first `/` ends the
    /// userinfo even after a `?key=` when a `user:` comes before that `?`
    /// (`postgres://u:S3c?x=retPW@host/db`), as libpq reads it (the first `@` before a `/`):
    /// the host and query then hold no part of the password.
    pub fn parse(url: &'a str) -> Option<UrlParts<'a>> {
        splits::count(url);
        let scheme_end = url.find("://")? + 3;
        let rest = &url[scheme_end..];
        let userinfo_end = rest
            .char_indices()
            .filter(|(_, c)| *c == '@')
            .map(|(i, _)| i)
            .rev()
            .find(|&at| {
                let before = &rest[..at];
                !starts_a_parameter_before(before) || reads_as_a_password(before)
            });
        let (userinfo, after) = match userinfo_end {
            Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
            None => (None, rest),
        };
        let (after, query) = match after.find('?') {
            Some(i) => (&after[..i], Some(&after[i + 1..])),
            None => (after, None),
        };
        let (hosts, path) = match after.find('/') {
            Some(i) => (&after[..i], &after[i + 1..]),
            None => (after, ""),
        };
        Some(UrlParts {
            scheme: &url[..scheme_end],
            userinfo,
            hosts,
            path,
            query,
        })
    }

    /// The user name (empty when none).
    pub fn user(&self) -> &'a str {
        self.userinfo
            .map_or("", |u| u.split_once(':').map_or(u, |(user, _)| user))
    }

    /// The password written in the URL, if any.
    pub fn password(&self) -> Option<&'a str> {
        self.userinfo
            .and_then(|u| u.split_once(':'))
            .map(|(_, p)| p)
    }

    /// The query's `key=value` pairs, in order (a key without `=` has an empty value).
    pub fn params(&self) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter(|kv| !kv.is_empty())
            .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
    }

    /// The first host without its port or brackets; a socket directory given as `?host=` when
    /// the authority has none; empty when there is neither.
    pub fn first_host(&self) -> String {
        let first = self.hosts.split(',').next().unwrap_or("");
        let host = if let Some(stripped) = first.strip_prefix('[') {
            stripped.split(']').next().unwrap_or("")
        } else {
            first.split(':').next().unwrap_or("")
        };
        if host.is_empty()
            && let Some((_, v)) = self.params().find(|(k, _)| *k == "host")
        {
            return v.to_string();
        }
        host.to_string()
    }

    /// Put the URL back together with `userinfo` and the query `params` given.
    pub fn join(&self, userinfo: Option<&str>, params: &[String]) -> String {
        let mut out = String::from(self.scheme);
        if let Some(u) = userinfo {
            out.push_str(u);
            out.push('@');
        }
        out.push_str(self.hosts);
        if !self.path.is_empty() {
            out.push('/');
            out.push_str(self.path);
        }
        if !params.is_empty() {
            out.push('?');
            out.push_str(&params.join("&"));
        }
        out
    }
}

/// How often each URL text was split, once counting is on: what a test reads to hold "a
/// run splits each of its URLs once" ([`splits::start_counting`], [`splits::of`]). Off, the
/// count costs one atomic load per split.
pub mod splits {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    static ON: AtomicBool = AtomicBool::new(false);
    static SPLITS: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

    /// Count every split of a URL text from now on (for the process; tests only).
    pub fn start_counting() {
        let mut map = SPLITS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get_or_insert_with(HashMap::new);
        ON.store(true, Ordering::SeqCst);
    }

    /// How often `text` was split since counting started.
    pub fn of(text: &str) -> usize {
        let map = SPLITS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.as_ref().and_then(|m| m.get(text)).copied().unwrap_or(0)
    }

    pub(super) fn count(text: &str) {
        if !ON.load(Ordering::Relaxed) {
            return;
        }
        let mut map = SPLITS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(m) = map.as_mut() {
            *m.entry(text.to_string()).or_insert(0) += 1;
        }
    }
}

/// Whether `text` (what precedes an `@`) reads as `user:password` holding a `?`: no `/` in
/// it, and a `:` before its first `?`.
fn reads_as_a_password(text: &str) -> bool {
    !text.contains('/') && text.find('?').is_some_and(|q| text[..q].contains(':'))
}

/// Whether `text` holds a `?` followed by a parameter's `key=` (letters, digits, `_`, `-`,
/// `.`): then what follows is a query, and an `@` after it is no userinfo's end.
fn starts_a_parameter_before(text: &str) -> bool {
    text.match_indices('?').any(|(i, _)| {
        let after = &text[i + 1..];
        let key_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .unwrap_or(after.len());
        key_len > 0 && after[key_len..].starts_with('=')
    })
}

/// Replace the password of a URL (`scheme://user:pass@host`, and a `password=` query
/// parameter) with `***`. The userinfo ends at the last `@` that is not inside the query
/// ([`UrlParts::parse`]), so a password holding `/`, `@` or a raw `?` is masked whole.
///
/// Then, whatever the parser made of it, everything between the `://` and the last `@` of
/// the authority (up to the first `/`) after the user's `:` is masked too: a password holding
/// `?key=` (`postgres://u:S3c?x=retPW@host/db`) reads as a query to the parser, and was
/// printed whole in the error that said the URL was wrong.
pub fn redact_url(url: &str) -> String {
    match UrlParts::parse(url) {
        Some(u) => u.masked(),
        // Not a URL: maybe a libpq key/value string (`host=... password=SECRET`).
        None => redact_key_value(url),
    }
}

/// `scheme://user:ANYTHING@rest` with `ANYTHING` as `***`, where the `@` is the last one
/// before the first `/` after the `://`.
fn redact_authority(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let Some(at) = authority.rfind('@') else {
        return url.to_string();
    };
    let Some(colon) = authority[..at].find(':') else {
        return url.to_string();
    };
    if &authority[colon + 1..at] == "***" {
        return url.to_string();
    }
    format!(
        "{}{}:***{}",
        &url[..scheme_end],
        &rest[..colon],
        &rest[at..]
    )
}

impl UrlParts<'_> {
    /// What [`redact_url`] gives for this URL: [`UrlParts::redacted`], then whatever stands
    /// between the user's `:` and the authority's last `@` masked too.
    pub fn masked(&self) -> String {
        redact_authority(&self.redacted())
    }

    /// The URL with its password (in the userinfo or a `password=` parameter) as `***`.
    pub fn redacted(&self) -> String {
        let userinfo = match self.password() {
            Some(_) => Some(format!("{}:***", self.user())),
            None => self.userinfo.map(str::to_string),
        };
        let params: Vec<String> = self
            .params()
            .map(|(k, v)| {
                if k.eq_ignore_ascii_case("password") {
                    format!("{k}=***")
                } else if v.is_empty() && !self.query.is_some_and(|q| q.contains(&format!("{k}=")))
                {
                    k.to_string()
                } else {
                    format!("{k}={v}")
                }
            })
            .collect();
        self.join(userinfo.as_deref(), &params)
    }
}

/// A libpq-style key/value string with its `password=` value masked: `password=SECRET` and
/// `password = 'se cret'` both become `password=***`.
pub fn redact_key_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.to_ascii_lowercase().find("password") {
        let after = &rest[at + "password".len()..];
        let trimmed = after.trim_start();
        let Some(value) = trimmed.strip_prefix('=') else {
            out.push_str(&rest[..at + "password".len()]);
            rest = after;
            continue;
        };
        let value = value.trim_start();
        let end = if let Some(quoted) = value.strip_prefix('\'') {
            // Up to the closing quote (a quote inside is written \').
            let mut i = 0;
            let bytes = quoted.as_bytes();
            while i < bytes.len() && bytes[i] != b'\'' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            1 + (i + 1).min(quoted.len())
        } else {
            value.find(char::is_whitespace).unwrap_or(value.len())
        };
        out.push_str(&rest[..at]);
        out.push_str("password=***");
        rest = &value[end.min(value.len())..];
    }
    out.push_str(rest);
    out
}

/// Any text (an error line) with the password of every URL in it masked: a URL is a run of
/// characters up to a space or a quote around a `://`.
pub fn redact_in_text(text: &str) -> String {
    let is_end = |c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = rest[..at].rfind(is_end).map_or(0, |i| i + 1);
        let end = rest[at..].find(is_end).map_or(rest.len(), |i| at + i);
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A command line with the password of every URL in it masked (`--url URL`, `--url=URL`, a
/// URL anywhere): what `run.json` records as `command_line`.
pub fn redact_args(args: &[String]) -> Vec<String> {
    args.iter()
        .map(|a| {
            if a.contains("://") {
                redact_url(a)
            } else {
                a.clone()
            }
        })
        .collect()
}

/// The query parameter that names a file holding the password (`?password_file=PATH`): what
/// `ibench server start` prints, so that the password itself is in no URL, log or process list.
pub const PASSWORD_FILE_PARAM: &str = "password_file";

/// Percent-encode everything but unreserved characters (for a URL's userinfo or query).
pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decode `%XX` escapes (a malformed escape is kept as it is).
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A `--url` read once: the text as given and its parts (`None` for a URL without `://`, e.g.
/// `sqlite:PATH`). Everything a run needs from its URL is taken from this value: the scheme,
/// the family's settings, the text `run.json` records and the host the sampler looks for.
#[derive(Clone, Debug)]
pub struct Url<'a> {
    /// The URL as given (it may hold a password: never show it).
    pub text: &'a str,
    /// Its parts, split once.
    pub parts: Option<UrlParts<'a>>,
}

impl<'a> Url<'a> {
    /// Split `text` once.
    pub fn parse(text: &'a str) -> Url<'a> {
        Url {
            text,
            parts: UrlParts::parse(text),
        }
    }

    /// The URL with its password masked, as `run.json`'s options record it.
    pub fn redacted(&self) -> String {
        match &self.parts {
            Some(u) => u.redacted(),
            None => redact_key_value(self.text),
        }
    }

    /// The URL with its password masked as [`redact_url`] masks it (also what the parser took
    /// for a query in the authority): what errors show.
    pub fn masked(&self) -> String {
        match &self.parts {
            Some(u) => u.masked(),
            None => redact_key_value(self.text),
        }
    }

    /// The URL's first host (`""` for a Unix socket, none given, or no `://`).
    pub fn host(&self) -> String {
        self.parts
            .as_ref()
            .map_or_else(String::new, UrlParts::first_host)
    }
}

/// A server URL's parts, owned, as a client completes them: the password file's password, a
/// family's completion (PostgreSQL's `PG*` variables) and the text messages show are made
/// from this value and rendered from it, never written back into text and parsed again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerUrl {
    /// `postgres://`, `mysql://`, ... (with the `://`).
    pub scheme: String,
    /// The URL has a userinfo (`user@`, even an empty one).
    pub has_userinfo: bool,
    /// The user as written (percent-encoded; empty when none).
    pub user: String,
    /// The password as written (percent-encoded), if any.
    pub password: Option<String>,
    /// One host or several, comma-separated, each with an optional port, as written.
    pub hosts: String,
    /// The database (the path without its `/`), as written.
    pub path: String,
    /// The query's parameters as written (`key=value` or `key`), in order, none empty.
    pub params: Vec<String>,
}

impl ServerUrl {
    /// The parts of `u`, owned.
    pub fn of(u: &UrlParts<'_>) -> ServerUrl {
        ServerUrl {
            scheme: u.scheme.to_string(),
            has_userinfo: u.userinfo.is_some(),
            user: u.user().to_string(),
            password: u.password().map(str::to_string),
            hosts: u.hosts.to_string(),
            path: u.path.to_string(),
            params: u
                .query
                .into_iter()
                .flat_map(|q| q.split('&'))
                .filter(|kv| !kv.is_empty())
                .map(str::to_string)
                .collect(),
        }
    }

    /// The parts of `u` with the password put in when it has none: from the file named by
    /// `?password_file=PATH` (the file's first line), else from the environment variable
    /// `env_var` (e.g. `MYSQL_PWD`). The parameter is always removed; a password written in
    /// the URL itself wins over both. The value holds the password in clear: give it only to
    /// the client, never to a message or a file (its [`ServerUrl::redacted`] masks it).
    pub fn with_password_file(
        u: &UrlParts<'_>,
        env_var: Option<&str>,
    ) -> Result<ServerUrl, UrlError> {
        let mut url = ServerUrl::of(u);
        let mut file = None;
        url.params.retain(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            if k == PASSWORD_FILE_PARAM {
                file = Some(percent_decode(v));
            }
            k != PASSWORD_FILE_PARAM
        });
        if url.password.is_some() {
            return Ok(url);
        }
        let password = if let Some(path) = &file {
            let text = std::fs::read_to_string(path).map_err(|e| UrlError::FileUnreadable {
                url: u.masked(),
                detail: format!(
                    "cannot read the password file {path} ({e}); fix {PASSWORD_FILE_PARAM}= in --url"
                ),
            })?;
            Some(
                text.lines()
                    .next()
                    .unwrap_or("")
                    .trim_end_matches('\r')
                    .to_string(),
            )
        } else {
            env_var
                .and_then(|v| std::env::var(v).ok())
                .filter(|p| !p.is_empty())
        };
        if let Some(p) = password {
            url.password = Some(percent_encode(&p));
            url.has_userinfo = true;
        }
        Ok(url)
    }

    /// The query's `key=value` pairs, in order (a key without `=` has an empty value).
    pub fn params(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params
            .iter()
            .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
    }

    /// Whether the query names `key`.
    pub fn has_param(&self, key: &str) -> bool {
        self.params().any(|(k, _)| k == key)
    }

    /// The URL, the password in clear (for the client's tests and [`resolve_password`] only).
    pub fn render(&self) -> String {
        self.join(self.password.as_deref(), &self.params)
    }

    /// The URL with its password (in the userinfo or a `password=` parameter) as `***`: what
    /// messages and `run.json` show.
    pub fn redacted(&self) -> String {
        let params: Vec<String> = self
            .params()
            .zip(&self.params)
            .map(|((k, _), kv)| {
                if k.eq_ignore_ascii_case("password") {
                    format!("{k}=***")
                } else {
                    kv.clone()
                }
            })
            .collect();
        redact_authority(&self.join(self.password.as_ref().map(|_| "***"), &params))
    }

    fn join(&self, password: Option<&str>, params: &[String]) -> String {
        let mut out = self.scheme.clone();
        if self.has_userinfo {
            out.push_str(&self.user);
            if let Some(p) = password {
                out.push(':');
                out.push_str(p);
            }
            out.push('@');
        }
        out.push_str(&self.hosts);
        if !self.path.is_empty() {
            out.push('/');
            out.push_str(&self.path);
        }
        if !params.is_empty() {
            out.push('?');
            out.push_str(&params.join("&"));
        }
        out
    }
}

/// Put the password into a `scheme://user@host/...` URL that has none: from the file named
/// by `?password_file=PATH` (the file's first line), else from the environment variable
/// `env_var` (e.g. `MYSQL_PWD`). The parameter is always removed; a password written in the
/// URL itself wins over both. A URL with neither is returned unchanged. The result holds the password in
/// clear: give it only to the client library, never to a message or a file.
pub fn resolve_password(url: &str, env_var: Option<&str>) -> Result<String, UrlError> {
    match UrlParts::parse(url) {
        Some(u) => Ok(ServerUrl::with_password_file(&u, env_var)?.render()),
        None => Ok(url.to_string()),
    }
}

/// Errors in choosing a backend from a URL.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    /// The scheme is none of the known ones.
    #[error(
        "unknown URL scheme in '{0}': use sqlite:PATH, postgres://USER@HOST:PORT/DB or mysql://USER@HOST:PORT/DB (--url)"
    )]
    UnknownScheme(String),
    /// The URL is malformed for its scheme.
    #[error("bad --url '{url}': {detail}")]
    Malformed {
        /// The URL, redacted.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A file the URL names cannot be read (its password file): the URL is right, the work
    /// of reading it failed.
    #[error("bad --url '{url}': {detail}")]
    FileUnreadable {
        /// The URL, redacted.
        url: String,
        /// What could not be read, and why.
        detail: String,
    },
}

impl UrlError {
    /// Whether the URL as written is wrong (a command line to fix), rather than a file it
    /// names unreadable.
    pub fn is_usage(&self) -> bool {
        !matches!(self, UrlError::FileUnreadable { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A password holding `?key=` reads as a query to the parser; it is masked all the same,
    /// up to the authority's last `@`, and only there.
    #[test]
    fn a_password_that_reads_as_a_query_is_masked_up_to_the_last_at() {
        let r = redact_url("postgres://u:S3c?x=retPW@host/db");
        assert_eq!(r, "postgres://u:***@host/db");
        let t = redact_in_text("error: bad --url 'mysql://u:a?b=c@d@h:1/x?ssl-mode=X': no");
        assert!(!t.contains("b=c") && !t.contains("c@d"), "{t}");
        assert_eq!(
            redact_url("postgres://h/db?user=bob@corp"),
            "postgres://h/db?user=bob@corp"
        );
        assert_eq!(redact_url("postgres://u:***@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact_url("postgres://bob@h/db"), "postgres://bob@h/db");
    }

    #[test]
    fn urls_split_into_their_parts() {
        let u = UrlParts::parse("postgres://bob:se/c@ret@h1:5,h2/db?sslmode=disable&x").unwrap();
        assert_eq!(u.scheme, "postgres://");
        assert_eq!(u.user(), "bob");
        assert_eq!(u.password(), Some("se/c@ret"));
        assert_eq!(u.hosts, "h1:5,h2");
        assert_eq!(u.path, "db");
        assert_eq!(
            u.params().collect::<Vec<_>>(),
            [("sslmode", "disable"), ("x", "")]
        );
        assert_eq!(u.first_host(), "h1");
        assert_eq!(
            u.join(Some("bob"), &[]),
            "postgres://bob@h1:5,h2/db",
            "joined back without the password and query"
        );
        let v = UrlParts::parse("postgres://u@/db?host=/run/pg").unwrap();
        assert_eq!(v.first_host(), "/run/pg");
        assert_eq!(
            UrlParts::parse("mysql://[::1]:3306/x")
                .unwrap()
                .first_host(),
            "::1"
        );
        assert!(UrlParts::parse("sqlite:x.db").is_none());
    }

    /// A `?` in a password stays in the password (it once split the URL there, and the rest
    /// of the password showed in the host, the query and every redacted error line); an `@`
    /// in a query value is still no userinfo.
    #[test]
    fn a_question_mark_in_a_password_stays_in_the_password() {
        let u = UrlParts::parse("postgres://u:pa?ss@h/db").unwrap();
        assert_eq!((u.user(), u.password()), ("u", Some("pa?ss")));
        assert_eq!((u.hosts, u.path, u.query), ("h", "db", None));
        let u = UrlParts::parse("postgres://u:se?cret@127.0.0.1:1/db?gssencmode=x").unwrap();
        assert_eq!(u.password(), Some("se?cret"));
        assert_eq!(u.hosts, "127.0.0.1:1");
        assert_eq!(u.params().collect::<Vec<_>>(), [("gssencmode", "x")]);
        let u = UrlParts::parse("mysql://u:a?b@c/d@h:3306/x?ssl-mode=DISABLED").unwrap();
        assert_eq!(u.password(), Some("a?b@c/d"));
        assert_eq!((u.hosts, u.path), ("h:3306", "x"));
        // An `@` in a query value: no userinfo, with a path or without.
        for url in [
            "postgres://h/db?user=bob@corp",
            "postgres://h?user=bob@corp",
        ] {
            let u = UrlParts::parse(url).unwrap();
            assert_eq!(u.userinfo, None, "{url}");
            assert_eq!(u.hosts, "h", "{url}");
            assert_eq!(u.params().collect::<Vec<_>>(), [("user", "bob@corp")]);
        }
        // A `?key=` in the password itself: the `@` before the first `/` ends it.
        let u = UrlParts::parse("postgres://u:S3c?x=retPW@host/db").unwrap();
        assert_eq!(
            (u.password(), u.hosts, u.query),
            (Some("S3c?x=retPW"), "host", None)
        );
        let u = UrlParts::parse("postgres://u@h/db?password_file=/home/a@b/pw").unwrap();
        assert_eq!((u.userinfo, u.hosts), (Some("u"), "h"));
        assert_eq!(
            u.params().collect::<Vec<_>>(),
            [("password_file", "/home/a@b/pw")]
        );
        // An `@` only after the query's `?`, the userinfo given in the authority as well.
        let u = UrlParts::parse("mysql://root@h/x?socket=/run/a@b.sock").unwrap();
        assert_eq!((u.userinfo, u.hosts, u.path), (Some("root"), "h", "x"));
    }

    /// The host a run's sampler looks for: the first host, a socket directory, or none.
    #[test]
    fn the_host_of_a_url() {
        let host = |url| Url::parse(url).host();
        assert_eq!(host("postgres://u:p@10.0.0.5:5432/db"), "10.0.0.5");
        assert_eq!(host("postgres://u@[::1]:5432/db"), "::1");
        assert_eq!(host("postgres://u@/db?host=/run/pg"), "/run/pg");
        assert_eq!(host("mysql://root@db.example/x"), "db.example");
        assert_eq!(host("sqlite:x.db"), "");
    }

    #[test]
    fn key_value_passwords_are_masked() {
        assert_eq!(
            redact_key_value("host=db password=SECRET dbname=x"),
            "host=db password=*** dbname=x"
        );
        assert_eq!(
            redact_key_value("host=db password = 'se cr\\'et' user=u"),
            "host=db password=*** user=u"
        );
        assert_eq!(redact_key_value("PASSWORD=abc"), "password=***");
        assert_eq!(redact_key_value("no secret here"), "no secret here");
    }

    #[test]
    fn password_is_redacted() {
        assert_eq!(
            redact_url("postgres://bob:secret@h:5/db"),
            "postgres://bob:***@h:5/db"
        );
        assert_eq!(redact_url("postgres://bob@h/db"), "postgres://bob@h/db");
        assert_eq!(redact_url("sqlite:/tmp/x"), "sqlite:/tmp/x");
        // A password with '/' or '@' in it, and one in the query.
        assert_eq!(
            redact_url("mysql://root:se/c@ret@h:3/db"),
            "mysql://root:***@h:3/db"
        );
        assert_eq!(
            redact_url("postgres://h/db?user=bob&password=secret&password_file=/x/pw"),
            "postgres://h/db?user=bob&password=***&password_file=/x/pw"
        );
        let args: Vec<String> = [
            "ibench",
            "run",
            "--url",
            "postgres://bob:secret@h/db",
            "--url=mysql://root:secret@h/x",
            "--label",
            "a:b@c",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            redact_in_text("error: unexpected argument 'postgres://u:secret@h/db' found"),
            "error: unexpected argument 'postgres://u:***@h/db' found"
        );
        let masked = redact_args(&args).join(" ");
        assert!(!masked.contains("secret"), "{masked}");
        assert!(masked.contains("--url=mysql://root:***@h/x"), "{masked}");
        assert!(masked.contains("a:b@c"), "{masked}");
    }

    #[test]
    fn a_password_file_fills_the_url_and_leaves_the_query() {
        let dir = std::env::temp_dir().join(format!("ibench-pwfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("password");
        std::fs::write(&file, "s3cr/t:x\n").unwrap();
        let url = format!(
            "postgres://bob@127.0.0.1:5/db?{PASSWORD_FILE_PARAM}={}&application_name=a",
            file.display()
        );
        assert_eq!(
            resolve_password(&url, None).unwrap(),
            "postgres://bob:s3cr%2Ft%3Ax@127.0.0.1:5/db?application_name=a"
        );
        // The environment fills only a URL without a password.
        let var = "IBENCH_TEST_PASSWORD_VAR";
        // SAFETY: a variable only this test reads.
        unsafe { std::env::set_var(var, "pw") };
        assert_eq!(
            resolve_password("mysql://root@h:3/ibench", Some(var)).unwrap(),
            "mysql://root:pw@h:3/ibench"
        );
        assert_eq!(
            resolve_password("mysql://root:given@h:3/ibench", Some(var)).unwrap(),
            "mysql://root:given@h:3/ibench"
        );
        assert_eq!(
            resolve_password("sqlite:x.db", Some(var)).unwrap(),
            "sqlite:x.db"
        );
        let missing = format!("mysql://root@h/db?{PASSWORD_FILE_PARAM}=/nonexistent/pw");
        let err = resolve_password(&missing, None).unwrap_err().to_string();
        assert!(
            err.contains("/nonexistent/pw") && err.contains("--url"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
