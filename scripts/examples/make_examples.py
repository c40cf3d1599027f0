#!/usr/bin/env python3
"""Writes the inputs and the expected outputs of the example modules in this directory, the
expected values computed by NumPy (in f64 or exact integers, then rounded once to the result
type), independently of XLA and of lazy-xla. Run from anywhere; needs numpy and ml_dtypes."""

import os

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
bf16 = ml_dtypes.bfloat16


def save(name, value):
    np.save(os.path.join(HERE, name), value)


rng = np.random.default_rng(15)

# affine_tuple.hlo: (x + b, s32(max(x + b, 0))); x is column-major in the module, but a .npy
# holds logical values, so any order will do.
x = np.array([[1.5, -2.25, 3.0], [-0.5, 4.75, -6.0]], np.float32)
b = np.array([0.25, 1.0, 2.5], np.float32)
save("affine_tuple.x.npy", x)
save("affine_tuple.b.npy", b)
save("affine_tuple.expected.0.npy", x + b)
save("affine_tuple.expected.1.npy", np.maximum(x + b, 0).astype(np.int32))

# dot_default.hlo and dot_highest.hlo: the same f32 matmul, one asking for Highest precision.
# Random values keep all 24 bits of the mantissa, so a TF32 dot (10 bits) is off by ~1e-3.
x = rng.standard_normal((4, 3)).astype(np.float32)
w = rng.standard_normal((3, 5)).astype(np.float32)
save("dot.x.npy", x)
save("dot.w.npy", w)
save("dot.expected.npy", (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32))

# dot_bf16_f32.hlo: bf16 x bf16 -> f32. Row 0 is 1 + 2^-8 + 2^-8: an f32 sum gives 1.0078125,
# a bf16 accumulator would round 1 + 2^-8 back to 1 (a tie to even) twice and give 1.
x = np.array([[1, 2**-8, 2**-8], [0.5, -3, 0.375]], bf16)
w = np.array([[1, 2], [1, -1], [1, 0.5]], bf16)
save("dot_bf16_f32.x.npy", x)
save("dot_bf16_f32.w.npy", w)
save("dot_bf16_f32.expected.npy",
     (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32))

# dot_s8_s32.hlo: s8 x s8 -> s32, exact; 4 * 127 * 127 = 64516 does not fit in s8 or s16.
x = np.array([[127, 127, 127, 127], [-128, 100, -7, 3]], np.int8)
w = np.array([[127, -128, 1], [127, 100, 2], [127, 0, 3], [127, 5, 4]], np.int8)
save("dot_s8_s32.x.npy", x)
save("dot_s8_s32.w.npy", w)
save("dot_s8_s32.expected.npy", (x.astype(np.int64) @ w.astype(np.int64)).astype(np.int32))

# softmax.hlo: a row softmax, two reduces with called computations (max, then sum).
x = np.array([[1.0, 2.0, 3.0], [-1000.0, 0.0, 1000.0]], np.float32)
z = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
save("softmax.x.npy", x)
save("softmax.expected.npy", (z / z.sum(axis=1, keepdims=True)).astype(np.float32))
