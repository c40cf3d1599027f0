fn main() {
    let _ = lazy_xla::shape!(f32[2, 3](1, 0));
}
