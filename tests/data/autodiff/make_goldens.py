"""Golden values for tests/autodiff.rs, from jax 0.6.0 in float64.

Run: ~/xla-venv/bin/python tests/data/autodiff/make_goldens.py > tests/data/autodiff/goldens.json
Each program's inputs are written beside jax's value and gradients (with respect to every
input), so the Rust test builds the same function, runs lazy-xla's value_and_grad on the same
inputs and compares. Programs recorded with `hlo=True` also carry the HLO text jax lowers the
function to (`jax.jit(f).lower(...).as_text(dialect="hlo")`, no derivative in it): the Rust test
imports that module and differentiates it itself.
"""
import json

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def inputs(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, size=s) for s in shapes]


def mlp_loss(x, w1, b1, w2, b2, labels):
    hidden = jnp.tanh(x @ w1 + b1)
    logits = hidden @ w2 + b2
    shifted = logits - jnp.max(logits, axis=1, keepdims=True)
    log_softmax = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum(labels * log_softmax, axis=1))


def layer_norm_loss(x, gamma, beta, weights):
    mean = jnp.mean(x, axis=1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=1, keepdims=True)
    y = (x - mean) * jax.lax.rsqrt(var + 1e-5) * gamma + beta
    return jnp.sum(jnp.tanh(y) * weights)


def attention_loss(q, k, v, weights):
    scores = q @ jnp.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    scores = scores - jnp.max(scores, axis=-1, keepdims=True)
    p = jnp.exp(scores)
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    return jnp.sum((p @ v) * weights)


def cnn_loss(x, w1, b1, w2, b2, w3, labels):
    """Two 3x3 convs (SAME, then strided VALID), tanh, a 2x2 max-pool, a dense layer, cross-entropy."""
    conv = lambda x, w, s, p: jax.lax.conv_general_dilated(x, w, s, p, dimension_numbers=("NHWC", "HWIO", "NHWC"))
    x = jnp.tanh(conv(x, w1, (1, 1), "SAME") + b1)
    x = jnp.tanh(conv(x, w2, (2, 2), "VALID") + b2)
    x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    logits = x.reshape(x.shape[0], -1) @ w3
    return -jnp.mean(jnp.sum(labels * jax.nn.log_softmax(logits), axis=-1))


def scan_loss(h, xs, w):
    def body(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h * 2.0
    h, ys = jax.lax.scan(body, h, xs)
    return jnp.sum(h) + jnp.sum(ys ** 2)


def fori_loop_loss(x, w):
    return jnp.sum(jax.lax.fori_loop(0, 5, lambda i, x: jnp.sin(x * w) + i * x, x))


def gru_loss(xs, h0, w_x, w_h, b):
    """examples/hlo/programs/generate.py's gru_scan, small, and a loss of both its results."""
    def cell(h, x):
        gx, gh = x @ w_x + b, h @ w_h
        hidden = h.shape[-1]
        z = jax.nn.sigmoid(gx[:, :hidden] + gh[:, :hidden])
        r = jax.nn.sigmoid(gx[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden])
        n = jnp.tanh(gx[:, 2 * hidden:] + r * gh[:, 2 * hidden:])
        h = (1 - z) * n + z * h
        return h, h
    h, hs = jax.lax.scan(cell, h0, xs)
    return jnp.sum(h * h) + jnp.sum(jnp.sin(hs))


def cond_loss(p, x, y):
    """A predicated and an indexed conditional."""
    a = jax.lax.cond(jnp.sum(p) > 0, lambda x, y: jnp.sin(x) * y, lambda x, y: x * x - y, x, y)
    i = jnp.clip(jnp.floor(jnp.sum(p) * 2).astype(jnp.int32), 0, 2)
    b = jax.lax.switch(i, [lambda x: jnp.exp(x), lambda x: jnp.tanh(x) * x, lambda x: -x], a)
    return jnp.sum(b * y)


def record(name, f, args, hlo=False):
    value, grads = jax.value_and_grad(f, argnums=tuple(range(len(args))))(*args)
    program = {
        "name": name,
        "inputs": [{"shape": list(a.shape), "values": np.ravel(a).tolist()} for a in args],
        "value": float(value),
        "grads": [np.ravel(g).tolist() for g in grads],
    }
    if hlo:
        program["hlo"] = jax.jit(f).lower(*args).as_text(dialect="hlo")
    return program


x, w1, b1, w2, b2 = inputs(0, (4, 3), (3, 5), (5,), (5, 2), (2,))
labels = np.eye(2)[[0, 1, 1, 0]]
ln = inputs(1, (3, 8), (8,), (8,), (3, 8))
cnn = inputs(2, (2, 8, 8, 2), (3, 3, 2, 3), (3,), (3, 3, 3, 4), (4,), (4, 5))
cnn_labels = np.eye(5)[[1, 3]]
programs = [
    record("mlp_loss", mlp_loss, [x, w1, b1, w2, b2, labels]),
    record("layer_norm_loss", layer_norm_loss, ln),
    record("attention_loss", attention_loss, inputs(3, (2, 5, 8), (2, 6, 8), (2, 6, 4), (2, 5, 4)), hlo=True),
    record("cnn_loss", cnn_loss, [*cnn, cnn_labels], hlo=True),
    record("scan_loss", scan_loss, inputs(4, (2, 3), (4, 2, 3), (3, 3)), hlo=True),
    record("fori_loop_loss", fori_loop_loss, inputs(5, (3,), (3,)), hlo=True),
    record("gru_loss", gru_loss, inputs(6, (5, 2, 3), (2, 4), (3, 12), (4, 12), (12,)), hlo=True),
    record("cond_loss", cond_loss, inputs(7, (2,), (3,), (3,)), hlo=True),
    record("cond_loss_other_branches", cond_loss, [np.array([-0.4, 0.1]), *inputs(8, (3,), (3,))], hlo=True),
]
print(json.dumps({"jax": jax.__version__, "programs": programs}, indent=1))
