//! PostgreSQL backend (stub).
use super::*;
/// PostgreSQL driver.
pub struct PostgresDriver;
impl PostgresDriver {
    /// Build from a `postgres://` URL.
    pub fn new(_url: &str) -> anyhow::Result<Self> { anyhow::bail!("todo") }
}
impl Driver for PostgresDriver {
    fn kind(&self) -> BackendKind { BackendKind::Postgres }
    fn connect(&self) -> BackendResult<Box<dyn Conn>> { todo!() }
    fn describe(&self) -> BackendResult<TargetInfo> { todo!() }
    fn settle(&self, _t: &[String], _b: Duration) -> BackendResult<Vec<SettleAction>> { todo!() }
}
