//! libpq's `target_session_attrs`: which of a multi-host URL's servers a connection may
//! stay on (`postgres://h1:p1,h2:p2/db?target_session_attrs=read-write`). The hosts are tried
//! in order, as libpq tries them; a server that does not fit is left (its connection ended)
//! and the next is tried. `prefer-standby` makes two passes: a standby first, then any server.
//!
//! What a server is, is asked once per connection, after the login, with one query
//! ([`SESSION_SQL`]): whether it is in recovery and whether its transactions are read-only
//! (libpq asks `SHOW transaction_read_only` and `pg_is_in_recovery()`, or reads the
//! `in_hot_standby` and `default_transaction_read_only` reports of PostgreSQL 14 and later;
//! one query answers both on every version ibench runs).

/// `target_session_attrs` (`PGTARGETSESSIONATTRS`), as libpq reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TargetSessionAttrs {
    /// Any server that accepts the login (libpq's default).
    #[default]
    Any,
    /// A server whose transactions are read-write by default.
    ReadWrite,
    /// A server whose transactions are read-only by default (a standby, or a primary with
    /// `default_transaction_read_only = on`).
    ReadOnly,
    /// A server not in recovery.
    Primary,
    /// A server in recovery (a hot standby).
    Standby,
    /// A standby if one of the hosts is, else any server.
    PreferStandby,
}

/// What the connection asks the server once it has logged in, when the attributes are not
/// `any`: in recovery, and read-only (`t`/`f`, `on`/`off`).
pub const SESSION_SQL: &str = "SELECT pg_catalog.pg_is_in_recovery(), \
     pg_catalog.current_setting('transaction_read_only')";

/// What a server said it is ([`SESSION_SQL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionState {
    /// `pg_is_in_recovery()`.
    pub in_recovery: bool,
    /// `transaction_read_only`.
    pub read_only: bool,
}

impl SessionState {
    /// Read the row of [`SESSION_SQL`]; `None` for anything but two booleans.
    pub fn of_row(row: &[Option<String>]) -> Option<SessionState> {
        let flag = |v: &Option<String>| match v.as_deref()? {
            "t" | "on" | "true" => Some(true),
            "f" | "off" | "false" => Some(false),
            _ => None,
        };
        match row {
            [recovery, read_only] => Some(SessionState {
                in_recovery: flag(recovery)?,
                read_only: flag(read_only)?,
            }),
            _ => None,
        }
    }

    /// How the server is named in a message: `a standby`, `a read-only primary`, ...
    pub fn describe(self) -> &'static str {
        match (self.in_recovery, self.read_only) {
            (true, _) => "a standby (in recovery)",
            (false, true) => "a read-only primary",
            (false, false) => "a read-write primary",
        }
    }
}

impl TargetSessionAttrs {
    /// The values libpq takes, in its words.
    pub const VALUES: &'static str =
        "any, read-write, read-only, primary, standby or prefer-standby";

    /// Read a value; the error is one line naming the values taken.
    pub fn parse(text: &str) -> Result<TargetSessionAttrs, String> {
        Ok(match text {
            "any" => TargetSessionAttrs::Any,
            "read-write" => TargetSessionAttrs::ReadWrite,
            "read-only" => TargetSessionAttrs::ReadOnly,
            "primary" => TargetSessionAttrs::Primary,
            "standby" => TargetSessionAttrs::Standby,
            "prefer-standby" => TargetSessionAttrs::PreferStandby,
            other => {
                return Err(format!(
                    "target_session_attrs={other} is not one libpq takes: use {}",
                    TargetSessionAttrs::VALUES
                ));
            }
        })
    }

    /// The name libpq gives it.
    pub fn name(self) -> &'static str {
        match self {
            TargetSessionAttrs::Any => "any",
            TargetSessionAttrs::ReadWrite => "read-write",
            TargetSessionAttrs::ReadOnly => "read-only",
            TargetSessionAttrs::Primary => "primary",
            TargetSessionAttrs::Standby => "standby",
            TargetSessionAttrs::PreferStandby => "prefer-standby",
        }
    }

    /// The passes over the hosts: what each pass accepts. `prefer-standby` is a standby pass
    /// then an any pass, as libpq makes it.
    pub fn passes(self) -> &'static [TargetSessionAttrs] {
        match self {
            TargetSessionAttrs::PreferStandby => {
                &[TargetSessionAttrs::Standby, TargetSessionAttrs::Any]
            }
            TargetSessionAttrs::Any => &[TargetSessionAttrs::Any],
            TargetSessionAttrs::ReadWrite => &[TargetSessionAttrs::ReadWrite],
            TargetSessionAttrs::ReadOnly => &[TargetSessionAttrs::ReadOnly],
            TargetSessionAttrs::Primary => &[TargetSessionAttrs::Primary],
            TargetSessionAttrs::Standby => &[TargetSessionAttrs::Standby],
        }
    }

    /// Whether a pass needs to ask the server what it is at all.
    pub fn asks(self) -> bool {
        self != TargetSessionAttrs::Any
    }

    /// Whether a server in `state` fits one pass (`self` one of [`TargetSessionAttrs::passes`]).
    pub fn accepts(self, state: SessionState) -> bool {
        match self {
            TargetSessionAttrs::Any => true,
            TargetSessionAttrs::ReadWrite => !state.read_only,
            TargetSessionAttrs::ReadOnly => state.read_only,
            TargetSessionAttrs::Primary => !state.in_recovery,
            TargetSessionAttrs::Standby | TargetSessionAttrs::PreferStandby => state.in_recovery,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(in_recovery: bool, read_only: bool) -> SessionState {
        SessionState {
            in_recovery,
            read_only,
        }
    }

    #[test]
    fn every_libpq_value_reads_and_a_bad_one_names_the_values() {
        for v in [
            "any",
            "read-write",
            "read-only",
            "primary",
            "standby",
            "prefer-standby",
        ] {
            assert_eq!(TargetSessionAttrs::parse(v).unwrap().name(), v);
        }
        let e = TargetSessionAttrs::parse("readwrite").unwrap_err();
        assert!(e.contains("readwrite") && e.contains("read-write"), "{e}");
        assert!(!e.contains('\n'));
    }

    /// Which server each value keeps, as libpq's documentation says.
    #[test]
    fn each_value_keeps_the_servers_libpq_keeps() {
        let primary = state(false, false);
        let ro_primary = state(false, true);
        let standby = state(true, true);
        let keeps = |attrs: TargetSessionAttrs, s| attrs.passes()[0].accepts(s);
        use TargetSessionAttrs::*;
        assert!(keeps(ReadWrite, primary) && !keeps(ReadWrite, ro_primary));
        assert!(!keeps(ReadWrite, standby));
        assert!(keeps(ReadOnly, ro_primary) && keeps(ReadOnly, standby));
        assert!(!keeps(ReadOnly, primary));
        assert!(keeps(Primary, primary) && keeps(Primary, ro_primary));
        assert!(!keeps(Primary, standby));
        assert!(keeps(Standby, standby) && !keeps(Standby, primary));
        assert_eq!(PreferStandby.passes(), [Standby, Any]);
        assert!(!Any.asks() && PreferStandby.passes()[0].asks());
    }

    #[test]
    fn the_session_row_reads_booleans_only() {
        let row = |a: &str, b: &str| vec![Some(a.to_string()), Some(b.to_string())];
        assert_eq!(
            SessionState::of_row(&row("t", "on")),
            Some(state(true, true))
        );
        assert_eq!(
            SessionState::of_row(&row("f", "off")),
            Some(state(false, false))
        );
        assert_eq!(SessionState::of_row(&row("x", "off")), None);
        assert_eq!(SessionState::of_row(&[None, None]), None);
        assert_eq!(state(true, true).describe(), "a standby (in recovery)");
    }
}
