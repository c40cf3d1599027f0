"""Writes model-sized jax 0.6.0 programs into examples/hlo/programs/, with inputs and jax's outputs.

    ~/xla-venv/bin/python examples/hlo/programs/generate.py [NAME ...]

For a program NAME: NAME.hlo is `jax.jit(f).lower(*args).as_text(dialect="hlo")`, NAME.in<i>.npy
its arguments in parameter order, NAME.out<i>.npy the leaves of what jax.jit computed (f32, x64
off; inputs from numpy's RNG seeded 2026 per program). Without NAMEs it writes every program;
all of them take about 290 MB, most of it adam_update, embedding_dense and mlp_forward. Time them
against jax with `scripts/bench_vs_jax.py examples/hlo/programs`.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_platforms", "cpu")
here = os.path.dirname(os.path.abspath(__file__))


def layer_norm(x, gamma=1.0, beta=0.0):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(jnp.var(x, axis=-1, keepdims=True) + 1e-5) * gamma + beta


def cross_entropy(logits, labels):
    """Mean over the batch of -log softmax(logits)[label]."""
    log_p = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(log_p, labels[:, None], axis=-1))


def softmax_xent(logits, labels):
    return cross_entropy(logits, labels)


def mlp_forward(x, w1, b1, w2, b2):
    """Dense, gelu (tanh), dense, layer norm."""
    return layer_norm(jax.nn.gelu(x @ w1 + b1) @ w2 + b2)


def mlp_train_step(x, target, w1, b1, w2, b2):
    """The MLP's mean squared error and its parameters after one SGD step (lr 1e-3)."""
    mse = lambda params: jnp.mean((mlp_forward(x, *params) - target) ** 2)
    params = (w1, b1, w2, b2)
    loss, grads = jax.value_and_grad(mse)(params)
    return (loss, *(p - 1e-3 * g for p, g in zip(params, grads)))


def transformer_block(x, ln1_g, ln1_b, w_qkv, w_o, ln2_g, ln2_b, w1, b1, w2, b2, heads=8):
    """Pre-layernorm causal self-attention and a 4x gelu MLP, each with a residual."""
    batch, time, dim = x.shape
    qkv = layer_norm(x, ln1_g, ln1_b) @ w_qkv  # [B, T, 3D]
    q, k, v = (a.reshape(batch, time, heads, dim // heads) for a in jnp.split(qkv, 3, axis=-1))
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(dim // heads).astype(np.float32)
    causal = jnp.arange(time)[:, None] >= jnp.arange(time)[None, :]
    weights = jax.nn.softmax(jnp.where(causal, scores, -jnp.inf), axis=-1)
    x = x + jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(batch, time, dim) @ w_o
    return x + jax.nn.gelu(layer_norm(x, ln2_g, ln2_b) @ w1 + b1) @ w2 + b2


def transformer_block_grad(x, *params):
    """The gradient of sum(block(x)**2) with respect to every parameter."""
    return jax.grad(lambda p: jnp.sum(transformer_block(x, *p) ** 2))(params)


def adam_update(params, grads, m, v, step):
    """One Adam step (lr 1e-3, betas 0.9/0.999, eps 1e-8); `step` counts from 1."""
    t = step.astype(jnp.float32)
    m = 0.9 * m + 0.1 * grads
    v = 0.999 * v + 0.001 * grads**2
    m_hat, v_hat = m / (1 - 0.9**t), v / (1 - 0.999**t)
    return params - 1e-3 * m_hat / (jnp.sqrt(v_hat) + 1e-8), m, v


def gru_scan(xs, h0, w_x, w_h, b):
    """A GRU cell scanned over the time axis of xs [T, B, I]; gates (z, r, n) stacked in w_*."""
    def cell(h, x):
        gx, gh = x @ w_x + b, h @ w_h
        hidden = h.shape[-1]
        z = jax.nn.sigmoid(gx[:, :hidden] + gh[:, :hidden])
        r = jax.nn.sigmoid(gx[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden])
        n = jnp.tanh(gx[:, 2 * hidden:] + r * gh[:, 2 * hidden:])
        h = (1 - z) * n + z * h
        return h, h
    return jax.lax.scan(cell, h0, xs)  # (last h, every h)


def gru_loss(xs, h0, w_x, w_h, b):
    """The squared hidden states of the scanned GRU, summed."""
    return jnp.sum(gru_scan(xs, h0, w_x, w_h, b)[1] ** 2)


def gru_scan_grad(xs, h0, *params):
    """The gradient of gru_loss with respect to the GRU's weights and bias."""
    return jax.grad(lambda p: gru_loss(xs, h0, *p))(params)


def embedding_dense(table, ids, w, b):
    return jax.nn.relu(table[ids] @ w + b)


def cnn_forward(x, w1, b1, w2, b2, w3, b3):
    """Two 3x3 SAME convs with relu (32, 64 channels), 2x2 max-pool, dense to 10 logits."""
    conv = lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    x = jax.nn.relu(conv(x, w1) + b1)
    x = jax.nn.relu(conv(x, w2) + b2)
    x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return x.reshape(x.shape[0], -1) @ w3 + b3


def cnn_grad(x, labels, *params):
    """The gradient of the cnn's mean cross-entropy with respect to its parameters."""
    return jax.grad(lambda p: cross_entropy(cnn_forward(x, *p), labels))(params)


def sort_rows(x):
    return jnp.sort(x, axis=-1)


def top_k(x):
    return jax.lax.top_k(x, 16)


def dense(r, fan_in, fan_out):
    """He-scaled weights and small biases for a dense layer."""
    return [r.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in), r.standard_normal(fan_out) * 0.1]


def block_params(r, d=512):
    """ln1 (gamma, beta), w_qkv, w_o, ln2 (gamma, beta), w1, b1, w2, b2 of transformer_block."""
    norm = lambda: [1 + 0.1 * r.standard_normal(d), 0.1 * r.standard_normal(d)]
    return [*norm(), r.standard_normal((d, 3 * d)) / np.sqrt(d), r.standard_normal((d, d)) / np.sqrt(d),
            *norm(), *dense(r, d, 4 * d), r.standard_normal((4 * d, d)) / np.sqrt(4 * d), np.zeros(d)]


def cnn_params(r):
    conv = lambda c_in, c_out: [r.standard_normal((3, 3, c_in, c_out)) * np.sqrt(2 / (9 * c_in)),
                                r.standard_normal(c_out) * 0.1]
    return [*conv(3, 32), *conv(32, 64), *dense(r, 16 * 16 * 64, 10)]


def gru_params(r, i=256, h=256):
    return [np.zeros((64, h)), r.standard_normal((i, 3 * h)) / np.sqrt(i),
            r.standard_normal((h, 3 * h)) / np.sqrt(h), r.standard_normal(3 * h) * 0.1]


normal = lambda r, *shape: r.standard_normal(shape)
# name: (function, its inputs from a numpy Generator)
programs = {
    "softmax_xent": (softmax_xent, lambda r: [normal(r, 4096, 1024) * 3, r.integers(0, 1024, 4096)]),
    "mlp_forward": (mlp_forward, lambda r: [normal(r, 256, 1024), *dense(r, 1024, 4096),
                                            *dense(r, 4096, 1024)]),
    "mlp_train_step": (mlp_train_step, lambda r: [normal(r, 128, 512), normal(r, 128, 512),
                                                  *dense(r, 512, 2048), *dense(r, 2048, 512)]),
    "transformer_block": (transformer_block, lambda r: [normal(r, 4, 256, 512), *block_params(r)]),
    "transformer_block_grad": (transformer_block_grad, lambda r: [normal(r, 4, 256, 512), *block_params(r)]),
    "adam_update": (adam_update, lambda r: [normal(r, 2048, 2048), normal(r, 2048, 2048) * 0.01,
                                            normal(r, 2048, 2048) * 1e-3, r.random((2048, 2048)) * 1e-4,
                                            np.array(10)]),
    "gru_scan": (gru_scan, lambda r: [normal(r, 64, 64, 256), *gru_params(r)]),
    "gru_scan_grad": (gru_scan_grad, lambda r: [normal(r, 64, 64, 256), *gru_params(r)]),
    "embedding_dense": (embedding_dense, lambda r: [normal(r, 32000, 256), r.integers(0, 32000, 4096),
                                                    *dense(r, 256, 256)]),
    "cnn_forward": (cnn_forward, lambda r: [normal(r, 32, 32, 32, 3), *cnn_params(r)]),
    "cnn_grad": (cnn_grad, lambda r: [normal(r, 32, 32, 32, 3), r.integers(0, 10, 32), *cnn_params(r)]),
    "sort_rows": (sort_rows, lambda r: [normal(r, 256, 4096)]),
    "top_k": (top_k, lambda r: [normal(r, 1024, 4096)]),
}

def inputs(name):
    """The arguments of program `name`, as generated (f32 and s32 arrays)."""
    return [np.asarray(a, np.int32 if np.asarray(a).dtype.kind == "i" else np.float32)
            for a in programs[name][1](np.random.default_rng(2026))]


def main(names):
    for name in names or programs:
        f = programs[name][0]
        args = inputs(name)
        with open(os.path.join(here, f"{name}.hlo"), "w") as out:
            out.write(jax.jit(f).lower(*args).as_text(dialect="hlo"))
        for i, a in enumerate(args):
            np.save(os.path.join(here, f"{name}.in{i}.npy"), a)
        leaves = jax.tree_util.tree_leaves(jax.jit(f)(*args))
        for i, leaf in enumerate(leaves):
            np.save(os.path.join(here, f"{name}.out{i}.npy"), np.asarray(leaf))
        print(f"{name}: {len(args)} inputs, {len(leaves)} outputs")


if __name__ == "__main__":
    main(sys.argv[1:])
