//! Values XLA's CPU backend returns at edge points (jaxlib 0.6.0, `jax.jit` on CPU).
