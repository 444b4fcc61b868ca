//! Full run on a private PostgreSQL started with ibench's own server code.

mod common;

use common::*;
use ibench::backend::Engine;
use ibench::server::ServerKind;

#[test]
fn all_ten_steps_on_a_private_postgres() {
    let server = start_server(ServerKind::Postgres, Engine::Innodb);
    let (run, dir) = run_and_read(small_options(&server.url, "pg-run"));
    check_full_run(&run, &dir);
    let target = run.target.as_ref().unwrap();
    assert_eq!(target.dbms, "PostgreSQL");
    let settle = run.steps[3].settle.as_ref().unwrap();
    let actions: Vec<&str> = settle.actions.iter().map(|a| a.action.as_str()).collect();
    assert!(actions.iter().any(|a| a.contains("VACUUM")), "{actions:?}");
    assert!(
        actions.iter().any(|a| a.contains("CHECKPOINT")),
        "{actions:?}"
    );
}
