"""Writes the jax 0.6.0 modules of this folder: programs whose scalar functions (sort
comparators, reducers, scatter combiners, select_and_scatter's select and scatter) are what
jax writes, for the test that every one of them compiles to a native path
(`src/exec/plan.rs`, `jax_scalar_functions_compile_to_native_paths`) and for tests/sorting.rs.

    ~/xla-venv/bin/python tests/data/jax_scalar_functions/generate.py
"""
import os
import jax, jax.numpy as jnp, numpy as np
from jax import lax
jax.config.update("jax_enable_x64", True)
x = np.zeros((4, 8), np.float32)
here = os.path.dirname(os.path.abspath(__file__))
out = {}
def low(name, f, *args):
    out[name] = jax.jit(f).lower(*args).as_text(dialect="hlo")
low("sort_f32", lambda a: jnp.sort(a, axis=-1), x)
low("sort_f64", lambda a: jnp.sort(a, axis=0), x.astype(np.float64))
low("sort_bf16", lambda a: jnp.sort(a), x.astype(jnp.bfloat16))
low("sort_f16", lambda a: jnp.sort(a), x.astype(np.float16))
low("sort_s32", lambda a: jnp.sort(a), x.astype(np.int32))
low("sort_u8", lambda a: jnp.sort(a), x.astype(np.uint8))
low("sort_desc", lambda a: jnp.sort(a, descending=True), x)
low("argsort", lambda a: jnp.argsort(a), x)
low("argsort_desc", lambda a: jnp.argsort(a, descending=True), x)
low("sort_two_keys", lambda a, b: lax.sort((a, b), num_keys=2), x, x.astype(np.int32))
low("sort_key_value", lambda a, b: lax.sort((a, b), num_keys=1), x, x)
low("argmax", lambda a: jnp.argmax(a, axis=-1), x)
low("argmin", lambda a: jnp.argmin(a, axis=0), x)
low("softmax", lambda a: jax.nn.softmax(a), x)
low("maxpool_grad", jax.grad(lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (1, 2), (1, 2), "VALID").sum()), x)
low("scatter_add", lambda a, i: a.at[i].add(1.0), x, np.zeros(3, np.int32))
low("scatter_set", lambda a, i: a.at[i].set(1.0), x, np.zeros(3, np.int32))
low("cumsum", lambda a: jnp.cumsum(a, axis=1), x)
low("cummax", lambda a: lax.cummax(a, axis=1), x)
low("top_k", lambda a: lax.top_k(a, 3), x)
low("logsumexp", lambda a: jax.nn.logsumexp(a, axis=1), x)
low("var", lambda a: jnp.var(a, axis=1), x)
low("any_all", lambda a: (jnp.any(a > 0, axis=1), jnp.all(a > 0, axis=1)), x)
for name, text in out.items():
    with open(os.path.join(here, f"{name}.hlo"), "w") as f:
        f.write(text)
