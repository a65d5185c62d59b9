//! PLACEHOLDER — being written.
use crate::{Fabric, FabricError};
/// Parses.
pub fn parse(_text: &str, _file: &str) -> Result<Fabric, FabricError> { Err(FabricError::Unsupported("todo".into())) }
/// Writes.
pub fn write(_f: &Fabric, _out: &mut impl std::io::Write) -> std::io::Result<()> { Ok(()) }
