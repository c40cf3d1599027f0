#!/usr/bin/env python3
"""Time lazy-xla's own gradients against jax.grad's, and check them against jax's values.

    python scripts/bench_grad_vs_jax.py [--seconds S] [--lazy-xla PATH] [--only NAME ...]

For each gradient program of examples/hlo/programs (transformer_block_grad, cnn_grad,
gru_scan_grad), whose
NAME.hlo is jax.grad of a loss as generate.py lowers it: the loss itself is lowered with jax
into a scratch folder, differentiated by `lazy-xla grad LOSS.hlo --wrt ...`, and the derived
module is timed by `lazy-xla bench` against jax's NAME.hlo on XLA's CPU backend (as
scripts/bench_vs_jax.py times a module), with its values checked against jax's. Prints a
markdown table; a ratio above 1 means lazy-xla's gradient (fused) is faster than jax.grad's.
Run `examples/hlo/programs/generate.py` first (the inputs are its NAME.in<i>.npy).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp

here = os.path.dirname(os.path.abspath(__file__))
programs_folder = os.path.join(here, "..", "examples", "hlo", "programs")
sys.path.insert(0, here)
sys.path.insert(0, programs_folder)
import bench_vs_jax  # noqa: E402  (time_jax, bench_lazy_xla, check_values, duration)
import generate  # noqa: E402  (the programs' functions and inputs)
import run_on_xla  # noqa: E402

# name: (its loss as a function of all the program's arguments, the parameters differentiated)
GRADIENTS = {
    "transformer_block_grad": (lambda x, *p: jnp.sum(generate.transformer_block(x, *p) ** 2), range(1, 11)),
    "cnn_grad": (lambda x, labels, *p: generate.cross_entropy(generate.cnn_forward(x, *p), labels), range(2, 8)),
    "gru_scan_grad": (generate.gru_loss, range(2, 5)),
}


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--lazy-xla", default=None)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args(argv)
    binary = bench_vs_jax.find_lazy_xla(args.lazy_xla)
    xla = run_on_xla.Xla("cpu")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_grad_vs_jax.") as scratch:
        for name, (loss, wrt) in GRADIENTS.items():
            if args.only and name not in args.only:
                continue
            module = os.path.join(programs_folder, name + ".hlo")
            inputs = [os.path.join(programs_folder, "%s.in%d.npy" % (name, i)) for i in range(len(generate.inputs(name)))]
            loss_module = os.path.join(scratch, name + ".loss.hlo")
            with open(loss_module, "w") as out:
                out.write(jax.jit(loss).lower(*generate.inputs(name)).as_text(dialect="hlo"))
            derived = os.path.join(scratch, name + ".lazy.hlo")
            subprocess.run([binary, "grad", loss_module, "--wrt", ",".join(map(str, wrt)), "-o", derived], check=True)
            jax_time, expected = bench_vs_jax.time_jax(xla, module, inputs, args.seconds)
            deadline = time.monotonic() + 600
            fused, unfused = bench_vs_jax.bench_lazy_xla(binary, derived, inputs, args.seconds, deadline)
            cell, details = bench_vs_jax.check_values(binary, derived, inputs, expected, 1e-3, 1e-4, deadline)
            for line in details:
                print("  %s %s" % (name, line))
            print("  %s: jax.grad %s, lazy-xla grad fused %s, unfused %s" % (
                name, bench_vs_jax.duration(jax_time), bench_vs_jax.duration(fused), bench_vs_jax.duration(unfused)))
            rows.append({"program": name, "jax": bench_vs_jax.duration(jax_time), "fused": bench_vs_jax.duration(fused),
                         "unfused": bench_vs_jax.duration(unfused), "ratio": "%.2fx" % (jax_time / fused),
                         "values": cell})
    print()
    print("| gradient | jax.grad (jax.jit) | lazy-xla grad fused | lazy-xla grad unfused | ratio (jax/fused) | values |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| %(program)s | %(jax)s | %(fused)s | %(unfused)s | %(ratio)s | %(values)s |" % row)


if __name__ == "__main__":
    main(sys.argv[1:])
