"""Writes the jax 0.6.0 modules in this folder, their inputs and jax's outputs (as .npy).

Run with the virtualenv of shared/reference/ask-xla.md (never a dependency of lazy-xla):
    ~/xla-venv/bin/python tests/data/jax/generate.py
Each program NAME gives NAME.hlo (`jax.jit(f).lower(*args).as_text(dialect="hlo")`),
NAME.in<i>.npy and NAME.out<i>.npy (the leaves of jax's result, in order); `mlp` also gives
mlp_optimized.hlo, XLA's CPU module after optimization (fusions, copies, bitcasts).
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_platforms", "cpu")
here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(13)


def mlp(x, w1, b1, w2, b2):
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.softmax(h @ w2 + b2, axis=-1)


def where_clip_relu(x, y):
    leaky = jnp.where(x > 0, x, 0.1 * x)
    return jnp.clip(y, -1.0, 1.0) + leaky + jax.nn.relu(y) + jnp.round(x * 2.0) + x % 0.75


def statistics(x, labels):
    mean = jnp.mean(x, axis=1)
    var = jnp.var(x, axis=1)
    best = jnp.argmax(x, axis=1)
    one_hot = jax.nn.one_hot(labels, 5)
    normed = (x - mean[:, None]) / jnp.sqrt(var[:, None] + 1e-5)
    return mean, var, best, one_hot, normed, jnp.sort(x, axis=1)


def loops(x, n):
    total = jax.lax.fori_loop(0, n, lambda i, acc: acc * 0.5 + x, jnp.zeros_like(x))
    return jax.lax.cond(n > 2, lambda v: jnp.tanh(v), lambda v: -v, total)


programs = {
    "mlp": (mlp, [rng.standard_normal((4, 8)), rng.standard_normal((8, 16)) * 0.3, rng.standard_normal(16) * 0.1,
                  rng.standard_normal((16, 3)) * 0.3, rng.standard_normal(3) * 0.1]),
    "where_clip_relu": (where_clip_relu, [rng.standard_normal((3, 5)) * 2, rng.standard_normal((3, 5)) * 2]),
    "statistics": (statistics, [rng.standard_normal((4, 6)), np.array([0, 3, 4, 1], np.int32)]),
    "loops": (loops, [rng.standard_normal(5), np.int32(4)]),
}

for name, (f, args) in programs.items():
    args = [a.astype(np.float32) if a.dtype == np.float64 else a for a in map(np.asarray, args)]
    lowered = jax.jit(f).lower(*args)
    with open(os.path.join(here, f"{name}.hlo"), "w") as out:
        out.write(lowered.as_text(dialect="hlo"))
    if name == "mlp":
        with open(os.path.join(here, "mlp_optimized.hlo"), "w") as out:
            out.write(lowered.compile().as_text())
    for i, a in enumerate(args):
        np.save(os.path.join(here, f"{name}.in{i}.npy"), a)
    for i, leaf in enumerate(jax.tree_util.tree_leaves(jax.jit(f)(*args))):
        np.save(os.path.join(here, f"{name}.out{i}.npy"), np.asarray(leaf))
