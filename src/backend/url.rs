//! The one URL parser: `scheme://[user[:password]@]hosts[/path][?query]` split into its parts
//! as text, and put back together. Redaction, the password file, the Postgres environment
//! completion and the sampler's "is the server on this host?" all read URLs through it.

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
    /// redaction and error messages showed it. (A password holding `?key=` itself still
    /// needs percent-encoding, as libpq asks for every reserved character.)
    pub fn parse(url: &'a str) -> Option<UrlParts<'a>> {
        let scheme_end = url.find("://")? + 3;
        let rest = &url[scheme_end..];
        let userinfo_end = rest
            .char_indices()
            .filter(|(_, c)| *c == '@')
            .map(|(i, _)| i)
            .rev()
            .find(|&at| !starts_a_parameter_before(&rest[..at]));
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
