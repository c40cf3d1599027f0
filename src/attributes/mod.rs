//! What an op is told besides its operands: the element-wise function it applies, the
//! dimensions a dot contracts, how a pad grows each dimension (xla_data.proto's messages).
//!
//! These are plain data, below both shape inference and the IR: the builder takes them from
//! users, shape inference checks them, and instructions carry them.

mod convolution;
mod dot;
mod elementwise;
mod gather;
mod padding;
mod precision;
mod random;
mod window;

pub use convolution::ConvolutionDimensionNumbers;
pub use dot::DotDimensionNumbers;
pub use elementwise::{BinaryOp, ComparisonDirection, UnaryOp};
pub use gather::{GatherDimensionNumbers, ScatterDimensionNumbers};
pub use padding::{PaddingConfig, PaddingConfigDimension};
pub use precision::{Precision, PrecisionConfig};
pub use random::RandomAlgorithm;
pub use window::Padding;
pub(crate) use window::{make_padding, Window, WindowDimension};
