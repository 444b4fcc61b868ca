//! SQLite backend (stub).
use super::*;
/// SQLite driver.
pub struct SqliteDriver;
impl SqliteDriver {
    /// Build from a `sqlite:PATH` URL.
    pub fn new(_url: &str) -> anyhow::Result<Self> { anyhow::bail!("todo") }
}
impl Driver for SqliteDriver {
    fn kind(&self) -> BackendKind { BackendKind::Sqlite }
    fn connect(&self) -> BackendResult<Box<dyn Conn>> { todo!() }
    fn describe(&self) -> BackendResult<TargetInfo> { todo!() }
    fn settle(&self, _t: &[String], _b: Duration) -> BackendResult<Vec<SettleAction>> { todo!() }
}
