//! X31 (docs/security.md): a password goes in clear over a Unix socket only when the socket's
//! directory is the server's own. A private PostgreSQL that asks for the password in clear
//! (`local ... password` in pg_hba.conf) over a socket in a world-writable directory is
//! refused, with the fixes named, unless the user opts in with `require_auth=password`.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{fresh_dir, ibench, start_server};
use ibench::results::target::Engine;
use ibench::server::ServerKind;

#[test]
fn no_password_in_clear_to_a_socket_others_can_write_without_opt_in() {
    let server = start_server(ServerKind::Postgres, Engine::Innodb);
    // The server asks for the password in clear on its socket.
    let hba = server.data_dir.join("pg_hba.conf");
    let text = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(&hba, format!("local all all password\n{text}")).unwrap();
    let mut admin = common::pg_connect(&server.url);
    admin.query("SELECT pg_reload_conf()").unwrap();
    let password_file = server
        .url
        .split("password_file=")
        .nth(1)
        .expect("the private server's URL names its password file")
        .to_string();
    let url = |extra: &str| {
        format!(
            "postgres://postgres@/postgres?host={}&port={}&password_file={password_file}{extra}",
            server.socket_dir.display(),
            server.port
        )
    };
    let run = |url: &str, tag: &str| {
        ibench(&[
            "run",
            "--url",
            url,
            "--steps",
            "l.i0",
            "--load-rows",
            "200",
            "--host-probe-ms",
            "0",
            "--quiet",
            "--out",
            fresh_dir(tag).to_str().unwrap(),
        ])
    };
    let mode = std::fs::metadata(&server.socket_dir)
        .unwrap()
        .permissions()
        .mode();
    std::fs::set_permissions(&server.socket_dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let refused = run(&url(""), "x31-refused");
    let opted_in = run(&url("&require_auth=password"), "x31-opted-in");
    std::fs::set_permissions(&server.socket_dir, std::fs::Permissions::from_mode(mode)).unwrap();
    let private = run(&url(""), "x31-private");

    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(
        said.contains("a directory every user can write") && said.contains("require_auth=password"),
        "{said}"
    );
    assert!(
        opted_in.status.success(),
        "{}",
        String::from_utf8_lossy(&opted_in.stderr)
    );
    assert!(
        private.status.success(),
        "{}",
        String::from_utf8_lossy(&private.stderr)
    );
}
