fn main() {
    let _ = lazy_xla::shape!(f33[2]);
}
