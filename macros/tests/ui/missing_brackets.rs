fn main() {
    let _ = lazy_xla::shape!(f32(2, 3));
    let _ = lazy_xla::shape!(f32);
}
