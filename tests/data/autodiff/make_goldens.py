"""Golden values for tests/autodiff.rs, from jax 0.6.0 in float64.

Run: ~/xla-venv/bin/python tests/data/autodiff/make_goldens.py > tests/data/autodiff/goldens.json
Each program's inputs are written beside jax's value and gradients (with respect to every
input), so the Rust test builds the same function, runs lazy-xla's value_and_grad on the same
inputs and compares.
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


def record(name, f, args):
    value, grads = jax.value_and_grad(f, argnums=tuple(range(len(args))))(*args)
    return {
        "name": name,
        "inputs": [{"shape": list(a.shape), "values": np.ravel(a).tolist()} for a in args],
        "value": float(value),
        "grads": [np.ravel(g).tolist() for g in grads],
    }


x, w1, b1, w2, b2 = inputs(0, (4, 3), (3, 5), (5,), (5, 2), (2,))
labels = np.eye(2)[[0, 1, 1, 0]]
ln = inputs(1, (3, 8), (8,), (8,), (3, 8))
programs = [
    record("mlp_loss", mlp_loss, [x, w1, b1, w2, b2, labels]),
    record("layer_norm_loss", layer_norm_loss, ln),
]
print(json.dumps({"jax": jax.__version__, "programs": programs}, indent=1))
