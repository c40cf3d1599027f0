#!/usr/bin/env python3
"""Check lazy-xla's HloModuleProto against XLA itself: for each HLO text module, lazy-xla writes
the serialized xla.HloModuleProto (`lazy-xla proto`) and runs the module on its inputs
(`lazy-xla run`); XLA (jaxlib) reads the proto (`XlaComputation(bytes)`, its HloModule and
program shape), converts it to StableHLO, compiles it for the CPU, runs it on the same inputs,
and the outputs are compared: to the bit with XLA's run of the module's text (the proto says
what the text says), and with lazy-xla's (floats within --rtol/--atol, integers and pred
exactly).

    ~/xla-venv/bin/python scripts/check_hlo_proto.py [MODULE.hlo | FOLDER]... [--lazy-xla PATH]

Without arguments: every module of examples/hlo/ and examples/hlo/programs/. A module NAME.hlo
takes its inputs from NAME.in0.npy, NAME.in1.npy, ... beside it (examples/hlo/programs/ has
them after `~/xla-venv/bin/python examples/hlo/programs/generate.py`); a module whose inputs are
missing is checked as far as XLA compiling it. The lazy-xla binary must be built with the
`pjrt` feature (`cargo build --features pjrt`; default target/debug/lazy-xla).

Prints one line per module (PASS, FAIL or ERROR, and why) and a closing `N passed, N failed`;
exits 0 when every module passed. Needs jax and jaxlib 0.6.0 and ml_dtypes, like
run_on_xla.py, whose helpers it uses. A tool for developers, not a dependency of the crate or
of CI.
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import run_on_xla as rox  # noqa: E402  (its Xla class, read_npy, compare, leaves)


def modules(paths):
    if not paths:
        paths = [os.path.join(ROOT, "examples", "hlo"), os.path.join(ROOT, "examples", "hlo", "programs")]
    found = []
    for path in paths:
        if os.path.isdir(path):
            found.extend(sorted(glob.glob(os.path.join(path, "*.hlo"))))
        else:
            found.append(path)
    return found


def inputs_of(module):
    stem = module[:-len(".hlo")]
    found = []
    while os.path.exists("%s.in%d.npy" % (stem, len(found))):
        found.append("%s.in%d.npy" % (stem, len(found)))
    return found


def check(xla, lazy_xla, module, work, rtol, atol):
    """Returns (status, detail)."""
    name = os.path.splitext(os.path.basename(module))[0]
    proto_path = os.path.join(work, name + ".pb")
    made = subprocess.run([lazy_xla, "proto", module, "-o", proto_path], capture_output=True, text=True)
    if made.returncode != 0:
        return "ERROR", "lazy-xla proto: " + made.stderr.strip()
    with open(proto_path, "rb") as file:
        proto = file.read()
    try:
        computation = xla.xc.XlaComputation(proto)
        computation.get_hlo_module()  # XLA's HloModule::CreateFromProto
        program = computation.program_shape()
        text = computation.as_hlo_text()
        xla.parse(text)  # XLA's text of our proto parses back
    except Exception as error:
        return "FAIL", "XLA does not read the proto: " + rox.one_line(error)
    with rox.captured_stderr() as diagnostics:
        try:
            mlir = xla.to_stablehlo(proto)
            executable = xla.backend.compile(mlir)
            error = None
        except Exception as raised:
            error = raised
    if error is not None:
        said = [line.strip() for line in diagnostics() if "error" in line]
        return "FAIL", "XLA rejects the module: " + (said[0] if said else rox.one_line(error))
    inputs = inputs_of(module)
    parameters = program.parameter_shapes()
    if len(inputs) != len(parameters):
        return "PASS", "XLA compiles it (no inputs beside it: not run)"
    values = [rox.read_npy(path, shape.numpy_dtype()) for path, shape in zip(inputs, parameters)]
    outputs = xla.run(executable, values)
    # The same module read by XLA from its text: equal to the bit when the proto says what the
    # text says (XLA compiles both the same way).
    with open(module, encoding="utf-8") as file:
        from_text = xla.parse(file.read()).as_serialized_hlo_module_proto()
    text_outputs = xla.run(xla.backend.compile(xla.to_stablehlo(from_text)), values)
    for index, (got, expected) in enumerate(zip(outputs, text_outputs)):
        equal, summary = rox.compare(got, expected, 0.0, 0.0)
        if not equal:
            return "FAIL", "output %d differs from XLA's run of the text: %s" % (index, summary)
    ours = os.path.join(work, name + ".out.npy")
    ran = subprocess.run([lazy_xla, "run", module, *sum((["--input", p] for p in inputs), []),
                          "--output", ours], capture_output=True, text=True)
    if ran.returncode != 0:
        return "ERROR", "lazy-xla run: " + ran.stderr.strip()
    paths = rox.output_paths([ours], len(outputs), "--output")
    details = []
    for index, (got, path) in enumerate(zip(outputs, paths)):
        expected = rox.read_npy(path, got.dtype)
        equal, summary = rox.compare(got, expected, rtol, atol)
        if not equal:
            return "FAIL", "output %d differs from lazy-xla's: %s" % (index, summary)
        details.append(summary)
    return "PASS", "%d output(s) equal to XLA's run of the text to the bit, to lazy-xla's: %s" % (
        len(outputs), "; ".join(details))


def main(argv):
    parser = argparse.ArgumentParser(prog="check_hlo_proto.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="HLO text modules or folders of them")
    parser.add_argument("--lazy-xla", default=os.path.join(ROOT, "target", "debug", "lazy-xla"))
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args(argv)
    try:
        xla = rox.Xla("cpu")
    except rox.BadInput as error:
        print("check_hlo_proto: %s" % error, file=sys.stderr)
        return 2
    passed = failed = 0
    with tempfile.TemporaryDirectory() as work:
        for module in modules(args.modules):
            try:
                status, detail = check(xla, args.lazy_xla, module, work, args.rtol, args.atol)
            except rox.BadInput as error:
                status, detail = "ERROR", str(error)
            print("%-5s %s: %s" % (status, os.path.relpath(module, ROOT), detail), flush=True)
            passed += status == "PASS"
            failed += status != "PASS"
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
