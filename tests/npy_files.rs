//! NumPy `.npy` files both ways: every element type round-trips (values and shapes, any
//! layout written in C order), files NumPy and ml_dtypes wrote read back (bf16 as `<V2`,
//! Fortran order as a column-major layout, big-endian data), bad files are errors.

use std::path::PathBuf;

use lazy_xla::*;

fn data(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/npy").join(file)
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lazy-xla-npy-{}-{name}.npy", std::process::id()))
}

/// Writes and reads back `literal`, which must come back equal (in the default layout).
fn round_trip(name: &str, literal: &Literal) {
    let path = temp(name);
    literal.write_npy(&path).unwrap();
    let back = Literal::read_npy(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let default = literal.relayout(&Layout::default_for_rank(literal.shape().rank())).unwrap();
    assert_eq!(format!("{back:?}"), format!("{default:?}"), "{name}");
}

#[test]
fn every_element_type_round_trips() -> Result<()> {
    let f = [0.1, -0.0, f64::INFINITY, -1e-3, 65504.0, 7.0];
    round_trip("pred", &Literal::from_vec(&shape!(pred[2, 3]), vec![true, false, true, true, false, false])?);
    round_trip("s8", &Literal::from_vec(&shape!(s8[3, 2]{0, 1}), vec![i8::MIN, -1, 0, 1, 2, i8::MAX])?);
    round_trip("s16", &Literal::vec1(&[i16::MIN, i16::MAX]));
    round_trip("s32", &Literal::scalar(-7i32));
    round_trip("s64", &Literal::vec1(&[i64::MIN, i64::MAX]));
    round_trip("u8", &Literal::vec1(&[0u8, 255]));
    round_trip("u16", &Literal::vec1(&[u16::MAX]));
    round_trip("u32", &Literal::vec1(&[u32::MAX, 1]));
    round_trip("u64", &Literal::from_vec::<u64>(&shape!(u64[0, 4]), vec![])?);
    round_trip("f16", &Literal::vec1(&f.map(half::f16::from_f64)));
    round_trip("bf16", &Literal::vec1(&f.map(half::bf16::from_f64)));
    round_trip("f32", &Literal::from_vec(&shape!(f32[1, 2, 3]{1, 0, 2}), f.map(|v| v as f32).to_vec())?);
    round_trip("f64", &Literal::vec1(&f));
    Ok(())
}

#[test]
fn files_numpy_and_ml_dtypes_wrote_read_back() -> Result<()> {
    let bf16 = Literal::read_npy(data("ml_dtypes_bfloat16.npy"))?;
    let want = [1.5f32, -2.0, 0.1, 3.0].map(half::bf16::from_f32).to_vec();
    assert_eq!(bf16, Literal::from_vec(&shape!(bf16[2, 2]), want)?);
    // np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3)): the memory as it was.
    let fortran = Literal::read_npy(data("fortran_int16.npy"))?;
    assert_eq!(fortran.shape(), &shape!(s16[2, 3]{0, 1}));
    assert_eq!(fortran.to_vec::<i16>()?, [0, 1, 2, 3, 4, 5]);
    assert_eq!(fortran.memory::<i16>()?, [0, 3, 1, 4, 2, 5]);
    assert_eq!(Literal::read_npy(data("big_endian_float64.npy"))?.to_vec::<f64>()?, [1.0, 2.0]);
    Ok(())
}

#[test]
fn bad_files_are_errors() {
    let path = temp("bad");
    std::fs::write(&path, b"not numpy").unwrap();
    assert!(Literal::read_npy(&path).unwrap_err().to_string().contains("not a .npy file"));
    // A header that claims far more values than the file holds.
    let bytes = std::fs::read(data("big_endian_float64.npy")).unwrap();
    let at = bytes.windows(4).position(|w| w == b"(2,)").unwrap();
    let mut claimed = [&bytes[..at], b"(9999999999,)", &bytes[at + 4..]].concat();
    // Keep the header's length: drop as many of its padding spaces.
    let newline = claimed.iter().position(|&b| b == b'\n').unwrap();
    claimed.drain(newline - 9..newline);
    std::fs::write(&path, &claimed).unwrap();
    let error = Literal::read_npy(&path).unwrap_err().to_string();
    assert!(error.contains("too short"), "{error}");
    std::fs::remove_file(&path).unwrap();
    assert!(Literal::read_npy(temp("missing")).is_err());
    let pair = Literal::tuple(vec![Literal::scalar(1i32)]);
    assert!(pair.write_npy(temp("tuple")).unwrap_err().to_string().contains("tuple"));
}
