#!/usr/bin/env python3
"""Run an HLO text module on one of XLA's backends (cpu, gpu, tpu) through jax.

    python scripts/run_on_xla.py MODULE.hlo IN.npy... [--backend cpu|gpu|tpu]
                                 [--expect OUT.npy ...] [--output OUT.npy ...] [--rtol R] [--atol A]

The module is HLO text as lazy-xla's `to_hlo_text()` prints it (or as jax and XLA's dumps print
it). The inputs are NumPy `.npy` files, one per entry parameter, in parameter order; bf16 files
as ml_dtypes saves them (2-byte raw `V2` fields) are read as bf16. A tuple result gives several
outputs, in order. Give one --output or --expect path per output; for a tuple, one path `out.npy`
stands for `out.0.npy`, `out.1.npy`, ... Without either, the outputs are printed.

Exit status: 0 when every output equals its expected file within the tolerance (floats:
|got - expected| <= atol + rtol * |expected|, NaN where NaN is expected; integers and pred
exactly), 1 when one does not, 2 on a bad module, bad inputs or a missing backend (one line on
stderr, no traceback).

Needs jax and jaxlib (0.6.0, or a current release) and ml_dtypes; for gpu/tpu, jax's plugin for
that hardware. This script is a tool for users, not a dependency of the crate or of its CI.
"""

import argparse
import contextlib
import os
import sys
import tempfile

PROG = "run_on_xla"
XLA_TYPE_NAMES = {
    "bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16",
    "bfloat16": "bf16", "float32": "f32", "float64": "f64", "complex64": "c64",
    "complex128": "c128",
}


class BadInput(Exception):
    """A bad module, input file or backend: reported in one line, exit status 2."""


def one_line(error):
    """The first meaningful line of an exception's message (XLA's messages run to many)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return " ".join(lines[:2]) if lines else type(error).__name__


def shape_text(dtype, dims):
    return "%s[%s]" % (XLA_TYPE_NAMES.get(dtype.name, dtype.name), ",".join(str(d) for d in dims))


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="run_on_xla.py",
        description="Compile an HLO text module on one of jax's backends, run it on .npy inputs, "
        "and write or compare its outputs.")
    parser.add_argument("module", help="the HLO module (text)")
    parser.add_argument("inputs", nargs="*", metavar="IN.npy", help="one per parameter, in order")
    parser.add_argument("--backend", default="cpu", choices=["cpu", "gpu", "tpu"])
    parser.add_argument("--expect", nargs="+", default=[], metavar="OUT.npy",
                        help="expected outputs: compare, print the differences, exit 0 or 1")
    parser.add_argument("--output", nargs="+", default=[], metavar="OUT.npy",
                        help="where to write the outputs")
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance (1e-4)")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance (1e-5)")
    return parser.parse_intermixed_args(argv)


class Xla:
    """The jaxlib entry points this script needs, found by feature, not by version:

    - parse:    newer jaxlib has `xla_client.hlo.hlo_module_from_text` (the `jaxlib._hlo`
                module); jaxlib 0.6.0 has `xla_client._xla.hlo_module_from_text`.
    - convert:  `xla_client._xla.mlir.hlo_to_stablehlo(serialized HloModuleProto)` in both; the
                clients compile StableHLO, not HLO.
    - compile:  newer clients have `compile_and_load(mlir, DeviceList, CompileOptions)`;
                jaxlib 0.6.0's `compile(mlir)` returns a loaded executable.
    Checked with jax 0.6.0 and jax 0.10.2 on their CPU backends.
    """

    def __init__(self, backend_name):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        if backend_name == "cpu":
            os.environ.setdefault("JAX_PLATFORMS", "cpu")
        try:
            import jax
            import jax.extend  # noqa: F401  (jax.extend.backend)
            import ml_dtypes  # noqa: F401  (registers bfloat16 and friends with NumPy)
            from jax._src.lib import xla_client
        except ImportError as error:
            raise BadInput("cannot import jax, jaxlib and ml_dtypes: %s" % one_line(error))
        self.jax = jax
        self.xc = xla_client
        extension = xla_client._xla
        hlo = getattr(xla_client, "hlo", None)
        self.parse = (getattr(hlo, "hlo_module_from_text", None)
                      or getattr(extension, "hlo_module_from_text", None))
        self.to_stablehlo = getattr(getattr(extension, "mlir", None), "hlo_to_stablehlo", None)
        if self.parse is None or self.to_stablehlo is None:
            raise BadInput("this jaxlib (%s) has neither xla_client.hlo.hlo_module_from_text nor "
                           "xla_client._xla.hlo_module_from_text with _xla.mlir.hlo_to_stablehlo"
                           % getattr(jax, "__version__", "?"))
        try:
            self.backend = jax.extend.backend.get_backend(backend_name)
        except Exception as error:  # RuntimeError in 0.6.0 and 0.10.2
            raise BadInput("jax has no %s backend here: %s" % (backend_name, one_line(error)))
        self.device = self.backend.local_devices()[0]

    def load(self, text):
        """Parses, converts and compiles the module; returns (executable, parameter shapes,
        result shapes) with the shapes as (dtype, dims) pairs, tuple results flattened."""
        try:
            module = self.parse(text)
        except Exception as error:  # XlaRuntimeError, ValueError: the parser's sentence
            raise BadInput("the module does not parse: %s" % one_line(error))
        proto = module.as_serialized_hlo_module_proto()
        program = self.xc.XlaComputation(proto).program_shape()
        parameters = []
        for number, shape in enumerate(program.parameter_shapes()):
            if shape.is_tuple():
                raise BadInput("parameter %d is a tuple (%s); a .npy input is one array"
                               % (number, shape))
            parameters.append((shape.numpy_dtype(), tuple(shape.dimensions())))
        results = list(leaves(program.result_shape()))
        # The HLO -> StableHLO conversion prints its diagnostics (the useful sentence, e.g.
        # `loc("dot.3"): error: ...`) on file descriptor 2 and raises a bare "Failed to convert";
        # capture them to report the sentence in the error line.
        with captured_stderr() as diagnostics:
            try:
                mlir = self.to_stablehlo(proto)
                if hasattr(self.backend, "compile_and_load"):
                    devices = getattr(self.xc, "DeviceList", None) or self.xc._xla.DeviceList
                    executable = self.backend.compile_and_load(
                        mlir, devices((self.device,)), self.xc.CompileOptions())
                else:
                    executable = self.backend.compile(mlir)
                error = None
            except Exception as raised:  # XlaRuntimeError: verifier and compiler sentences
                error = raised
        if error is not None:
            said = [line.strip() for line in diagnostics() if "error" in line]
            raise BadInput("XLA rejects the module: %s" % (said[0] if said else one_line(error)))
        return executable, parameters, results

    def run(self, executable, inputs):
        arguments = [self.jax.device_put(value, self.device) for value in inputs]
        try:
            outputs = executable.execute(arguments)
        except Exception as error:
            raise BadInput("the run failed: %s" % one_line(error))
        import numpy as np
        return [np.asarray(output) for output in outputs]


@contextlib.contextmanager
def captured_stderr():
    """Redirects file descriptor 2 (where XLA's C++ code prints) to a temporary file; yields a
    function returning the captured lines once the block has ended."""
    lines = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lambda: lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read().decode("utf-8", "replace").splitlines())


def leaves(shape):
    """The array shapes of a (possibly nested) tuple shape, in order, as (dtype, dims)."""
    if shape.is_tuple():
        for element in shape.tuple_shapes():
            yield from leaves(element)
    else:
        yield shape.numpy_dtype(), tuple(shape.dimensions())


def read_npy(path, want=None):
    """Loads a .npy file; with `want` (the dtype the module has there), a raw 2-byte file
    (ml_dtypes' bf16) is read as that type. Byte order becomes native."""
    import numpy as np
    try:
        value = np.load(path, allow_pickle=False)
    except OSError as error:
        raise BadInput("%s: %s" % (path, one_line(error)))
    except ValueError as error:
        raise BadInput("%s: not a .npy file of numbers (%s)" % (path, one_line(error)))
    if (want is not None and value.dtype.kind == "V" and value.dtype.names is None
            and value.dtype.itemsize == want.itemsize):
        value = value.view(want)
    if value.dtype.byteorder not in ("=", "|"):
        value = value.astype(value.dtype.newbyteorder("="))
    return value


def output_paths(paths, count, flag):
    """One path per output; one `out.npy` for several outputs means out.0.npy, out.1.npy, ..."""
    if len(paths) == count:
        return paths
    if len(paths) == 1 and count > 1:
        stem, extension = os.path.splitext(paths[0])
        return ["%s.%d%s" % (stem, index, extension or ".npy") for index in range(count)]
    raise BadInput("the module has %d output(s) but %s names %d file(s)" % (count, flag, len(paths)))


def compare(got, expected, rtol, atol):
    """Returns (equal, summary line) for one output against its expected values."""
    import numpy as np
    if got.shape != expected.shape:
        return False, "shape %s, expected %s" % (list(got.shape), list(expected.shape))
    if got.size == 0:
        return True, "no elements"
    if all(v.dtype.kind in "biu" for v in (got, expected)):
        # Integers and pred: exact, in Python integers (s64 and u64 do not fit in an f64).
        within = got == expected
        difference = np.abs(got.astype(object) - expected.astype(object))
        magnitude = np.abs(expected.astype(object))
        max_abs = int(difference.max())
        max_rel = max((float(d) / float(m) for d, m in zip(difference.flat, magnitude.flat)
                       if d and m), default=0.0)
        nan_mismatch = 0
    else:
        wide = np.complex128 if "c" in (got.dtype.kind, expected.dtype.kind) else np.float64
        a, e = got.astype(wide), expected.astype(wide)
        # Equal values (infinities of one sign included) and NaN against NaN are equal; other
        # non-finite values are never within a tolerance.
        same = (a == e) | (np.isnan(a) & np.isnan(e))
        finite = np.isfinite(a) & np.isfinite(e)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            difference = np.where(same, 0.0, np.abs(a - e))
            relative = np.where(same | (e == 0), 0.0, difference / np.abs(e))
            within = same | (finite & (difference <= atol + rtol * np.abs(e)))
        nan_mismatch = int(np.count_nonzero((np.isnan(a) | np.isnan(e)) & ~same))
        measured = difference[~np.isnan(difference)]
        max_abs = float(measured.max()) if measured.size else 0.0
        measured = relative[~np.isnan(relative)]
        max_rel = float(measured.max()) if measured.size else 0.0
    summary = "max abs diff %.3g, max rel diff %.3g" % (max_abs, max_rel)
    bad = int(np.count_nonzero(~within))
    if bad:
        first = tuple(int(i) for i in np.argwhere(~within)[0])
        summary += "; %d of %d elements differ, first at %s: got %r, expected %r" % (
            bad, got.size, list(first), got[first].item(), expected[first].item())
        if nan_mismatch:
            summary += " (%d NaN where a number is expected or the reverse)" % nan_mismatch
    return bad == 0, summary


def main(argv):
    args = parse_args(argv)
    import numpy as np
    try:
        with open(args.module, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput("%s: %s" % (args.module, one_line(error)))
    xla = Xla(args.backend)
    executable, parameters, results = xla.load(text)
    if len(args.inputs) != len(parameters):
        raise BadInput("the module has %d parameter(s) but %d input file(s) were given"
                       % (len(parameters), len(args.inputs)))
    inputs = []
    for number, (path, (dtype, dims)) in enumerate(zip(args.inputs, parameters)):
        value = read_npy(path, dtype)
        if value.dtype != dtype or value.shape != dims:
            raise BadInput("%s is %s; parameter %d of the module is %s" % (
                path, shape_text(value.dtype, value.shape), number, shape_text(dtype, dims)))
        inputs.append(value)
    outputs = xla.run(executable, inputs)
    print("%s: jax %s, %s backend (%s), %d output(s)" % (
        PROG, xla.jax.__version__, args.backend, xla.device.device_kind, len(outputs)))

    write_paths = output_paths(args.output, len(outputs), "--output") if args.output else []
    for path, value in zip(write_paths, outputs):
        np.save(path, value)
        print("wrote %s (%s)" % (path, shape_text(value.dtype, value.shape)))
    if not args.output and not args.expect:
        for index, value in enumerate(outputs):
            print("output %d: %s\n%s" % (index, shape_text(value.dtype, value.shape), value))

    all_equal = True
    expect_paths = output_paths(args.expect, len(outputs), "--expect") if args.expect else []
    for index, (path, got, (dtype, _)) in enumerate(zip(expect_paths, outputs, results)):
        expected = read_npy(path, dtype)
        equal, summary = compare(got, expected, args.rtol, args.atol)
        all_equal &= equal
        print("output %d %s vs %s: %s: %s" % (index, shape_text(got.dtype, got.shape), path,
                                              "equal" if equal else "DIFFERENT", summary))
    if args.expect:
        print("%s within rtol %g, atol %g" % ("all equal" if all_equal else "NOT equal",
                                               args.rtol, args.atol))
    return 0 if all_equal else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BadInput as error:
        print("%s: error: %s" % (PROG, error), file=sys.stderr)
        sys.exit(2)
