#!/usr/bin/env python3
"""Time lazy-xla against jax (XLA's CPU backend) on every HLO module of a folder, and check values.

    python scripts/bench_vs_jax.py FOLDER [--seconds S] [--repeat R] [--timeout T]
                                   [--lazy-xla PATH] [--only NAME ...] [--rtol R] [--atol A]

e.g. `~/xla-venv/bin/python scripts/bench_vs_jax.py examples/hlo/programs --seconds 2 --repeat 3`
after `~/xla-venv/bin/python examples/hlo/programs/generate.py`.

Every NAME.hlo in FOLDER with inputs NAME.in0.npy, NAME.in1.npy, ... (one per parameter, in
order) is
  - compiled on XLA's CPU backend from the same HLO text, as scripts/run_on_xla.py does, and
    timed: one warm-up run, then runs (each to block_until_ready) for S seconds, at least 3;
  - timed by `lazy-xla bench NAME.hlo --input ... --seconds S` (its "fused: median" and
    "unfused: median" lines);
  - run by `lazy-xla run NAME.hlo --input ... --output ...`, whose outputs (a tuple flattened in
    order) are compared with what XLA computed (with NAME.out<i>.npy when XLA fails): floats
    within |got - jax| <= atol' + rtol * |jax| (defaults rtol 1e-3, atol 1e-4; atol' is atol or
    1e-6 of the output's largest magnitude, whichever is larger; NaN equals NaN),
    integers exactly. The largest absolute and relative differences are printed per output.
Then a markdown table: | program | jax.jit | lazy-xla fused | lazy-xla unfused | ratio (jax/fused)
| values |; a ratio above 1 means lazy-xla (fused) is faster than jax.

--repeat R times everything R times and prints a table each time (the values are checked in the
first round only). --timeout T (default 300 s) bounds the lazy-xla commands of one program in
one round together; a program that fails or runs out of time gets a row saying so. --lazy-xla
defaults to target/release/lazy-xla of this repository, else `lazy-xla` on PATH. --only limits
the run to the named programs. Needs jax, jaxlib and ml_dtypes, like run_on_xla.py.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_on_xla  # noqa: E402  (Xla, read_npy, compare, one_line)

UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}

# The absolute tolerance of an output is at least this much of its largest magnitude.
SCALED_ATOL = 1e-6


class Failed(Exception):
    """One step of one program failed; the message goes in its table cell."""


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="bench_vs_jax.py", description=__doc__.split("\n")[0])
    parser.add_argument("folder", help="a folder of NAME.hlo with NAME.in<i>.npy")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds of timed runs (2)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds, a table each (1)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds for one program's lazy-xla commands in one round (300)")
    parser.add_argument("--lazy-xla", dest="lazy_xla", default=None, help="the lazy-xla binary")
    parser.add_argument("--only", nargs="+", default=None, metavar="NAME", help="these programs only")
    parser.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance (1e-3)")
    parser.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance (1e-4)")
    return parser.parse_args(argv)


def find_lazy_xla(given):
    if given:
        return given
    built = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "lazy-xla")
    return os.path.normpath(built) if os.path.exists(built) else shutil.which("lazy-xla") or "lazy-xla"


def programs(folder, only):
    """(name, module path, input paths) for each NAME.hlo with NAME.in0.npy, sorted by name."""
    found = []
    for file in sorted(os.listdir(folder)):
        name = file[:-len(".hlo")]
        if not file.endswith(".hlo") or (only and name not in only):
            continue
        inputs = []
        while os.path.exists(os.path.join(folder, "%s.in%d.npy" % (name, len(inputs)))):
            inputs.append(os.path.join(folder, "%s.in%d.npy" % (name, len(inputs))))
        if inputs:
            found.append((name, os.path.join(folder, file), inputs))
    return found


def duration(seconds):
    """As lazy-xla's format_duration prints it."""
    if seconds >= 1.0:
        return "%.3f s" % seconds
    return "%.3f ms" % (seconds * 1e3) if seconds >= 1e-3 else "%.1f µs" % (seconds * 1e6)


def time_jax(xla, module, input_paths, seconds):
    """(median seconds per run, the outputs) of the module on XLA's CPU backend."""
    with open(module, encoding="utf-8") as file:
        executable, parameters, _ = xla.load(file.read())
    if len(parameters) != len(input_paths):
        raise Failed("%d parameters, %d inputs" % (len(parameters), len(input_paths)))
    arguments = [xla.jax.device_put(run_on_xla.read_npy(path, dtype), xla.device)
                 for path, (dtype, _) in zip(input_paths, parameters)]

    def once():
        for output in executable.execute(arguments):
            output.block_until_ready()

    outputs = [np.asarray(output) for output in executable.execute(arguments)]  # warm-up
    times, started = [], time.perf_counter()
    while len(times) < 3 or time.perf_counter() - started < seconds:
        start = time.perf_counter()
        once()
        times.append(time.perf_counter() - start)
    return statistics.median(times), outputs


def lazy_xla(command, deadline):
    """Runs a lazy-xla command until `deadline` (time.monotonic()); returns its stdout."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise Failed("timed out")
    try:
        done = subprocess.run(command, capture_output=True, timeout=left)
    except subprocess.TimeoutExpired:
        raise Failed("timed out")
    except OSError as error:
        raise Failed(run_on_xla.one_line(error))
    if done.returncode != 0:
        said = [line for line in done.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
        raise Failed("exit %d: %s" % (done.returncode, said[-1][:120] if said else "no message"))
    return done.stdout.decode("utf-8", "replace")


def bench_lazy_xla(binary, module, inputs, seconds, deadline):
    """The fused and unfused medians (seconds) of `lazy-xla bench`."""
    command = [binary, "bench", module, *(a for path in inputs for a in ("--input", path)),
               "--seconds", str(seconds)]
    text = lazy_xla(command, deadline)
    medians = dict(re.findall(r"^\s*(fused|unfused): median ([\d.]+ (?:s|ms|µs))", text, re.M))
    if set(medians) != {"fused", "unfused"}:
        raise Failed("no medians in lazy-xla bench's output")
    value = lambda text: float(text.split()[0]) * UNITS[text.split()[1]]
    return value(medians["fused"]), value(medians["unfused"])


def check_values(binary, module, inputs, expected, rtol, atol, deadline):
    """Runs the module with `lazy-xla run`; returns (cell text, detail lines)."""
    with tempfile.TemporaryDirectory(prefix="bench_vs_jax.") as scratch:
        paths = [os.path.join(scratch, "out%d.npy" % i) for i in range(len(expected))]
        lazy_xla([binary, "run", module, *(a for path in inputs for a in ("--input", path)),
                  *(a for path in paths for a in ("--output", path))], deadline)
        details, bad, worst_abs, worst_rel = [], 0, 0.0, 0.0
        for index, (path, want) in enumerate(zip(paths, expected)):
            got = run_on_xla.read_npy(path, want.dtype)
            if got.dtype != want.dtype:
                equal, summary = False, "dtype %s, jax gave %s" % (got.dtype, want.dtype)
            else:
                # The absolute tolerance grows with the output's scale: a gradient whose
                # elements reach thousands loses the digits of its small elements to f32
                # cancellation, in XLA as much as here.
                scale = float(np.abs(want).max()) if want.size and want.dtype.kind == "f" else 0.0
                equal, summary = run_on_xla.compare(got, want, rtol, max(atol, SCALED_ATOL * scale))
            bad += not equal
            details.append("out%d %s: %s%s" % (index, run_on_xla.shape_text(want.dtype, want.shape),
                                                "" if equal else "MISMATCH: ", summary))
            numbers = re.search(r"max abs diff (\S+), max rel diff (\S+?)(;|$)", summary)
            if numbers:
                worst_abs = max(worst_abs, float(numbers.group(1)))
                worst_rel = max(worst_rel, float(numbers.group(2)))
    cell = "%s (abs %.2g, rel %.2g)" % ("ok" if not bad else "%d of %d DIFFER" % (bad, len(expected)),
                                        worst_abs, worst_rel)
    return cell, details


def saved_outputs(module):
    """NAME.out0.npy, NAME.out1.npy, ... next to NAME.hlo, or None."""
    outputs = []
    while os.path.exists("%s.out%d.npy" % (module[:-len(".hlo")], len(outputs))):
        outputs.append(np.load("%s.out%d.npy" % (module[:-len(".hlo")], len(outputs))))
    return outputs or None


def one_program(xla, binary, name, module, inputs, args, values):
    """A table row; `values` caches the value check by name across rounds."""
    row = {"program": name}
    outputs = None
    try:
        jax_time, outputs = time_jax(xla, module, inputs, args.seconds)
        row["jax"] = duration(jax_time)
    except Exception as error:  # BadInput, Failed, XlaRuntimeError: one cell, no traceback
        jax_time, row["jax"] = None, "failed: %s" % run_on_xla.one_line(error)[:100]
    deadline = time.monotonic() + args.timeout
    if outputs is None:  # jax failed: compare with the outputs saved next to the module, if any
        outputs = saved_outputs(module)
    if name not in values:
        if outputs is None:
            values[name] = ("not checked (jax failed, no NAME.out0.npy)", [])
        else:
            try:
                values[name] = check_values(binary, module, inputs, outputs, args.rtol, args.atol, deadline)
            except Exception as error:
                values[name] = ("run failed: %s" % run_on_xla.one_line(error)[:100], [])
        for line in values[name][1]:
            print("  %s %s" % (name, line))
    row["values"] = values[name][0]
    try:
        fused, unfused = bench_lazy_xla(binary, module, inputs, args.seconds, deadline)
        row["fused"], row["unfused"] = duration(fused), duration(unfused)
        row["ratio"] = "%.2fx" % (jax_time / fused) if jax_time else "-"
    except Exception as error:
        row["fused"] = "bench failed: %s" % run_on_xla.one_line(error)[:100]
        row["unfused"] = row["ratio"] = "-"
    print("  %s: jax %s, fused %s, unfused %s" % (name, row["jax"], row["fused"], row["unfused"]),
          flush=True)
    return row


def table(rows):
    lines = ["| program | jax.jit | lazy-xla fused | lazy-xla unfused | ratio (jax/fused) | values |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append("| %s |" % " | ".join(row[key].replace("|", "/") for key in
                                           ("program", "jax", "fused", "unfused", "ratio", "values")))
    return "\n".join(lines)


def main(argv):
    args = parse_args(argv)
    binary = find_lazy_xla(args.lazy_xla)
    try:
        found = programs(args.folder, args.only)
    except OSError as error:
        print("bench_vs_jax: error: %s" % run_on_xla.one_line(error), file=sys.stderr)
        return 2
    if not found:
        print("bench_vs_jax: error: no NAME.hlo with NAME.in0.npy in %s" % args.folder, file=sys.stderr)
        return 2
    try:
        xla = run_on_xla.Xla("cpu")
    except run_on_xla.BadInput as error:
        print("bench_vs_jax: error: %s" % error, file=sys.stderr)
        return 2
    print("jax %s (XLA CPU, %s) against %s, %g s of runs each, rtol %g atol %g"
          % (xla.jax.__version__, xla.device.device_kind, binary, args.seconds, args.rtol, args.atol))
    values = {}
    for round_number in range(1, args.repeat + 1):
        print("\nround %d of %d" % (round_number, args.repeat), flush=True)
        rows = [one_program(xla, binary, name, module, inputs, args, values)
                for name, module, inputs in found]
        print("\n" + table(rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
