//! `bitcast_convert_type`: the operand's bytes, little-endian, in logical row-major order,
//! read back as the new type (a wider type takes the last dimension's elements together, a
//! narrower one spreads each element over a new last dimension), whatever the layouts.

use crate::error::Result;
use crate::literal::Literal;
use crate::storage::{with_native_type, NativeType};

/// An element type's little-endian bytes.
trait Bytes: NativeType {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn take(bytes: &[u8]) -> Self;
}

macro_rules! bytes_of_numbers {
    ($($t:ty),*) => {$(
        impl Bytes for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()) }
            fn take(bytes: &[u8]) -> Self {
                let mut array = [0u8; std::mem::size_of::<$t>()];
                array.copy_from_slice(bytes);
                <$t>::from_le_bytes(array)
            }
        }
    )*};
}
bytes_of_numbers!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, half::f16, half::bf16);

impl Bytes for bool {
    const SIZE: usize = 1;
    fn put(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
    fn take(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

/// Writes `operand`'s bits, reinterpreted, into `out` (of the shape bitcast-convert gives).
pub(crate) fn bitcast_convert(operand: &Literal, out: &mut Literal) -> Result<()> {
    let bytes = with_native_type!(operand.element_type(), S => {
        let values = operand.to_vec::<S>()?;
        let mut bytes = Vec::with_capacity(values.len() * S::SIZE);
        values.into_iter().for_each(|v| v.put(&mut bytes));
        bytes
    });
    with_native_type!(out.element_type(), D => {
        out.fill_from_vec(bytes.chunks_exact(D::SIZE).map(D::take).collect::<Vec<D>>())
    })
}
