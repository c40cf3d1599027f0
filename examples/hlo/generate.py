"""Writes the jax 0.6.0 modules of examples/hlo/, their inputs and jax's outputs (.npy).

    python3 -m venv ~/xla-venv && ~/xla-venv/bin/pip install jaxlib==0.6.0 jax==0.6.0 "numpy<2.5" ml_dtypes
    ~/xla-venv/bin/python examples/hlo/generate.py

For a program NAME: NAME.hlo is `jax.jit(f).lower(*args).as_text(dialect="hlo")`, NAME.in<i>.npy
its arguments, NAME.out<i>.npy the leaves of what jax computed. The same three lines make such
files from any jitted function of yours.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_platforms", "cpu")
here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(2026)


def mlp(x, w1, b1, w2, b2):
    """Two dense layers, gelu between, softmax over the classes."""
    return jax.nn.softmax(jax.nn.gelu(x @ w1 + b1) @ w2 + b2, axis=-1)


def layer_norm(x, gamma, beta):
    """Normalizes each row to mean 0 and variance 1, then scales and shifts."""
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta


def attention(q, k, v):
    """Single-head attention with a causal mask: position i attends to positions <= i."""
    scores = q @ k.T / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    n = q.shape[0]
    causal = jnp.arange(n)[:, None] >= jnp.arange(n)[None, :]
    weights = jax.nn.softmax(jnp.where(causal, scores, -jnp.inf), axis=-1)
    return weights @ v, weights


f32 = np.float32
programs = {
    "mlp": (mlp, [rng.standard_normal((8, 16)), rng.standard_normal((16, 32)) * 0.25, rng.standard_normal(32) * 0.1,
                  rng.standard_normal((32, 4)) * 0.25, rng.standard_normal(4) * 0.1]),
    "layer_norm": (layer_norm, [rng.standard_normal((6, 32)) * 3 + 1, rng.standard_normal(32), rng.standard_normal(32)]),
    "attention": (attention, [rng.standard_normal((10, 16)), rng.standard_normal((10, 16)), rng.standard_normal((10, 16))]),
}

for name, (f, args) in programs.items():
    args = [np.asarray(a, f32) for a in args]
    with open(os.path.join(here, f"{name}.hlo"), "w") as out:
        out.write(jax.jit(f).lower(*args).as_text(dialect="hlo"))
    for i, a in enumerate(args):
        np.save(os.path.join(here, f"{name}.in{i}.npy"), a)
    for i, leaf in enumerate(jax.tree_util.tree_leaves(jax.jit(f)(*args))):
        np.save(os.path.join(here, f"{name}.out{i}.npy"), np.asarray(leaf))
