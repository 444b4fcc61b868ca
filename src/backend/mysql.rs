//! MySQL/MariaDB backend (stub).
use super::*;
/// MySQL driver.
pub struct MysqlDriver;
impl MysqlDriver {
    /// Build from a `mysql://` URL.
    pub fn new(_url: &str, _engine: Engine) -> anyhow::Result<Self> { anyhow::bail!("todo") }
}
impl Driver for MysqlDriver {
    fn kind(&self) -> BackendKind { BackendKind::Mysql }
    fn connect(&self) -> BackendResult<Box<dyn Conn>> { todo!() }
    fn describe(&self) -> BackendResult<TargetInfo> { todo!() }
    fn settle(&self, _t: &[String], _b: Duration) -> BackendResult<Vec<SettleAction>> { todo!() }
}
