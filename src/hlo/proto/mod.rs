//! XLA's serialized `HloModuleProto` (what PJRT compiles as format "hlo"), out of and into
//! the IR: the messages of `hlo.proto` and `xla_data.proto` a module needs (`messages`,
//! derived with prost, XLA's field numbers), the IR written as them (`encode`) and read back
//! (`decode`, every field checked, the result verified). Behind the `pjrt` feature.

mod decode;
mod encode;
mod messages;

use std::sync::Arc;

use crate::error::Result;
use crate::hlo::ir::HloComputation;

/// The serialized `HloModuleProto` of the module whose entry computation is `entry`.
pub(crate) fn module_to_proto(entry: &Arc<HloComputation>) -> Vec<u8> {
    prost::Message::encode_to_vec(&encode::module_proto(entry))
}

/// The entry computation of the serialized `HloModuleProto` `bytes`, verified.
pub(crate) fn module_from_proto(bytes: &[u8]) -> Result<HloComputation> {
    decode::module(bytes)
}
