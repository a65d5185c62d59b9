//! PLACEHOLDER — being written.
use crate::{Fabric, FabricError, lft::ForwardingTables};
/// Magic.
pub const MAGIC: &[u8] = b"IBCLOUD\0";
/// File.
#[derive(Debug)]
pub struct NativeFile { /// f
 pub fabric: Fabric, /// t
 pub tables: Option<ForwardingTables> }
/// Enc.
pub fn encode(_f: &Fabric, _t: Option<&ForwardingTables>) -> Vec<u8> { Vec::new() }
/// Dec.
pub fn decode(_d: &[u8], _file: &str) -> Result<NativeFile, FabricError> { Err(FabricError::Unsupported("todo".into())) }
