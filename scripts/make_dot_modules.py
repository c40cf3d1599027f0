#!/usr/bin/env python3
"""Write one-dot HLO modules and their inputs, for timing the register tile alone.

    python scripts/make_dot_modules.py FOLDER

makes FOLDER/dMxKxN.hlo (f32[M,K]{1,0} · f32[K,N]{1,0}) with dMxKxN.in0.npy and .in1.npy for
the shapes of the whole-program benchmark's dots, ready for `lazy-xla bench` and
scripts/bench_vs_jax.py. Needs numpy.
"""

import os
import sys

import numpy as np

SHAPES = [(256, 1024, 4096), (256, 4096, 1024), (1024, 512, 2048), (1024, 2048, 512), (4096, 256, 256)]


def main():
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(0)
    for m, k, n in SHAPES:
        name = "d%dx%dx%d" % (m, k, n)
        with open(os.path.join(folder, name + ".hlo"), "w") as f:
            f.write(
                "HloModule %s, entry_computation_layout={(f32[%d,%d]{1,0}, f32[%d,%d]{1,0})->f32[%d,%d]{1,0}}\n"
                "ENTRY main {\n"
                "  a = f32[%d,%d]{1,0} parameter(0)\n"
                "  b = f32[%d,%d]{1,0} parameter(1)\n"
                "  ROOT d = f32[%d,%d]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                "}\n" % (name, m, k, k, n, m, n, m, k, k, n, m, n)
            )
        np.save(os.path.join(folder, name + ".in0.npy"), rng.standard_normal((m, k)).astype(np.float32))
        np.save(os.path.join(folder, name + ".in1.npy"), rng.standard_normal((k, n)).astype(np.float32))


if __name__ == "__main__":
    main()
