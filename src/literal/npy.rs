//! NumPy's `.npy` files, through the `npyz` crate: every element type NumPy holds (`bool`,
//! `int8`…`uint64`, `float16`, `float32`, `float64`; bf16 as ml_dtypes saves it, a 2-byte
//! raw `V2` field), any byte order; a Fortran-order array is read as a column-major layout.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use npyz::{DType, Deserialize, FixedSizeBytes, NpyFile, Order, TypeChar, TypeStr, WriterBuilder};

use crate::element_type::ElementType;
use crate::error::{Error, Result};
use crate::literal::{Contents, Literal};
use crate::shape::{Layout, Shape};
use crate::storage::NativeType;

/// An error about the file at `path`.
fn file_error(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{}: {what}", path.display()))
}

/// The element type of an `.npy` field type.
fn element_type(type_str: &TypeStr) -> Option<ElementType> {
    use ElementType::*;
    Some(match (type_str.type_char(), type_str.size_field()) {
        (TypeChar::Bool, 1) => Pred,
        (TypeChar::Int, 1) => S8,
        (TypeChar::Int, 2) => S16,
        (TypeChar::Int, 4) => S32,
        (TypeChar::Int, 8) => S64,
        (TypeChar::Uint, 1) => U8,
        (TypeChar::Uint, 2) => U16,
        (TypeChar::Uint, 4) => U32,
        (TypeChar::Uint, 8) => U64,
        (TypeChar::Float, 2) => F16,
        (TypeChar::Float, 4) => F32,
        (TypeChar::Float, 8) => F64,
        (TypeChar::RawData, 2) => Bf16,
        _ => return None,
    })
}

impl Literal {
    /// Reads a NumPy `.npy` file: its shape, element type and values (a Fortran-order array
    /// as a column-major layout, its memory as it was). bf16 arrays are read as ml_dtypes
    /// saves them (2-byte raw fields, `V2`).
    ///
    /// ```
    /// use lazy_xla::{shape, Literal};
    /// let path = std::env::temp_dir().join(format!("read-npy-doc-{}.npy", std::process::id()));
    /// let m = Literal::from_vec(&shape!(u16[2, 2]), vec![1u16, 2, 3, 4])?;
    /// m.write_npy(&path)?;
    /// assert_eq!(Literal::read_npy(&path)?, m);
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn read_npy(path: impl AsRef<Path>) -> Result<Literal> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|e| file_error(path, e))?;
        let file_len = file.metadata().map_err(|e| file_error(path, e))?.len();
        let npy = NpyFile::new(BufReader::new(file))
            .map_err(|e| file_error(path, format!("not a .npy file: {e}")))?;
        let DType::Plain(type_str) = npy.dtype() else {
            return Err(file_error(path, "structured arrays (record dtypes) are not supported"));
        };
        let Some(element_type) = element_type(&type_str) else {
            let what = match type_str.type_char() {
                TypeChar::Complex => "complex numbers are out of scope for lazy-xla".to_string(),
                _ => format!("lazy-xla has no element type for NumPy's {type_str}"),
            };
            return Err(file_error(path, what));
        };
        let dimensions = npy
            .shape()
            .iter()
            .map(|&d| i64::try_from(d).map_err(|_| file_error(path, format!("dimension {d} is too large"))))
            .collect::<Result<Vec<i64>>>()?;
        let mut shape = Shape::try_new(element_type, &dimensions).map_err(|e| file_error(path, e))?;
        // The values must be in the file: no allocation for what a header merely claims.
        let bytes = (shape.element_count() as u128) * element_type.byte_size() as u128;
        if bytes > file_len as u128 {
            return Err(file_error(
                path,
                format!("the file is too short for {shape} ({bytes} bytes of values)"),
            ));
        }
        if npy.order() == Order::Fortran {
            shape = shape.relayout(&Layout::new(&(0..dimensions.len() as i64).collect::<Vec<_>>()))?;
        }
        use ElementType::*;
        let read = |e: std::io::Error| file_error(path, e);
        let contents = match element_type {
            Pred => storage::<bool>(npy).map_err(read)?,
            S8 => storage::<i8>(npy).map_err(read)?,
            S16 => storage::<i16>(npy).map_err(read)?,
            S32 => storage::<i32>(npy).map_err(read)?,
            S64 => storage::<i64>(npy).map_err(read)?,
            U8 => storage::<u8>(npy).map_err(read)?,
            U16 => storage::<u16>(npy).map_err(read)?,
            U32 => storage::<u32>(npy).map_err(read)?,
            U64 => storage::<u64>(npy).map_err(read)?,
            F16 => storage::<half::f16>(npy).map_err(read)?,
            F32 => storage::<f32>(npy).map_err(read)?,
            F64 => storage::<f64>(npy).map_err(read)?,
            Bf16 => {
                let raw: Vec<FixedSizeBytes<2>> = npy.into_vec().map_err(read)?;
                let values = raw.into_iter().map(|FixedSizeBytes(b)| half::bf16::from_le_bytes(b)).collect();
                Contents::Array(half::bf16::into_storage(values))
            }
        };
        Ok(Literal { shape, contents })
    }

    /// Writes the literal as a NumPy `.npy` file (C order; bf16 as ml_dtypes saves it, 2-byte
    /// raw `V2` fields). A tuple has no `.npy` form: write its elements.
    ///
    /// ```
    /// use lazy_xla::Literal;
    /// let path = std::env::temp_dir().join(format!("write-npy-doc-{}.npy", std::process::id()));
    /// Literal::vec1(&[1.5f32, -2.0]).write_npy(&path)?;
    /// assert_eq!(Literal::read_npy(&path)?.to_vec::<f32>()?, [1.5, -2.0]);
    /// # std::fs::remove_file(&path).unwrap();
    /// # Ok::<(), lazy_xla::Error>(())
    /// ```
    pub fn write_npy(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        if self.is_tuple() {
            return Err(file_error(path, "a tuple has no .npy form; write each element"));
        }
        let file = File::create(path).map_err(|e| file_error(path, e))?;
        let shape: Vec<u64> = self.shape().dimensions().iter().map(|&d| d as u64).collect();
        let mut out = BufWriter::new(file);
        use ElementType::*;
        let written = match self.element_type() {
            Pred => write::<bool>(self, &shape, &mut out),
            S8 => write::<i8>(self, &shape, &mut out),
            S16 => write::<i16>(self, &shape, &mut out),
            S32 => write::<i32>(self, &shape, &mut out),
            S64 => write::<i64>(self, &shape, &mut out),
            U8 => write::<u8>(self, &shape, &mut out),
            U16 => write::<u16>(self, &shape, &mut out),
            U32 => write::<u32>(self, &shape, &mut out),
            U64 => write::<u64>(self, &shape, &mut out),
            F16 => write::<half::f16>(self, &shape, &mut out),
            F32 => write::<f32>(self, &shape, &mut out),
            F64 => write::<f64>(self, &shape, &mut out),
            Bf16 => (|| {
                let dtype = DType::Plain("<V2".parse().expect("a valid type string"));
                let mut writer =
                    npyz::WriteOptions::new().dtype(dtype).shape(&shape).writer(&mut out).begin_nd()?;
                let values = self.to_vec::<half::bf16>().map_err(std::io::Error::other)?;
                writer.extend(values.into_iter().map(|v| FixedSizeBytes(v.to_le_bytes())))?;
                writer.finish()
            })(),
        };
        written.and_then(|()| std::io::Write::flush(&mut out)).map_err(|e| file_error(path, e))
    }
}

/// The file's values as typed storage, in the file's order.
fn storage<T: NativeType + Deserialize>(npy: NpyFile<BufReader<File>>) -> std::io::Result<Contents> {
    Ok(Contents::Array(T::into_storage(npy.into_vec::<T>()?)))
}

/// Writes `literal`'s values in logical row-major (C) order.
fn write<T: NativeType + npyz::AutoSerialize>(
    literal: &Literal,
    shape: &[u64],
    out: &mut BufWriter<File>,
) -> std::io::Result<()> {
    let values = literal.to_vec::<T>().map_err(std::io::Error::other)?;
    let mut writer = npyz::WriteOptions::new().default_dtype().shape(shape).writer(out).begin_nd()?;
    writer.extend(values)?;
    writer.finish()
}
