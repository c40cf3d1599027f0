//! `examples/from_jax.rs` imports jax 0.6.0's modules in `examples/hlo/` and checks them against
//! jax's outputs: it must run through, every module within 1e-5 fused and unfused.

#[allow(dead_code)]
#[path = "../examples/from_jax.rs"]
mod from_jax;

#[test]
fn every_module_matches_jax() {
    let text = from_jax::report().unwrap_or_else(|error| panic!("the tutorial failed: {error}"));
    for name in ["mlp", "layer_norm", "attention"] {
        assert!(text.contains(&format!("\n{name}: ")), "{text}");
    }
    assert_eq!(text.matches("matches jax within 1e-5").count(), 3, "{text}");
    assert!(text.contains("fusions"), "{text}");
}
