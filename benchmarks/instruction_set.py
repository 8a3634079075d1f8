"""The instruction set a benchmark's libraries run: as the machine offers (``native``), or their
AVX2 code paths on this core (``avx2``), with readings taken inside the process of what each one
picked.

Usage (the option of ``bench_pages.py``, ``bench_browser_run.py`` and ``bench_fidelity.py``)::

    python benchmarks/bench_pages.py --isa avx2
    python benchmarks/instruction_set.py [--isa avx2]   # print this process's readings and exit

numpy, faiss, OpenBLAS, torch (ATen, oneDNN, MKL), pyarrow and glibc each choose their kernels
from the CPU's features once, when they load, and each has an environment variable that caps
the choice (:data:`AVX2_ENV`). So ``--isa avx2`` starts the benchmark again (``os.execve``,
before anything is measured) with those variables set, and that process's children (the
dashboard server of ``bench_browser_run``) inherit them. :func:`readings` then asks each
library what it chose; :func:`problems` lists every one still on an AVX-512 path, and the
benchmarks stop with exit status 2 when there is one: a run said to be AVX2 never runs native.

This is the AVX2 instruction set on an AVX-512 core, not an AVX2 machine: the clock, the caches,
the memory and the core's other units stay this machine's, and only the vector width and the
instructions the libraries issue change. ``native`` adds nothing to the environment the command
was given (this machine's own ``OPENBLAS_CORETYPE=Haswell`` included); the readings say what
it ran.

What no variable reaches: code compiled for one target without dispatch (it runs the same in
both modes), orjson (its wheel holds AVX-512 string code, chosen with ``cpuid``, no switch),
Chromium, and MKL on an AMD core, which runs its generic branch in both modes (its verbose
header names no instruction set there).

Exit status 2 with a message on a bad ``--isa`` (before anything loads).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

#: the choices of ``--isa``
ISAS = ("native", "avx2")
#: set by :func:`enter` in the process it starts again, so that process does not start another
MARK = "SYNTHREVIEW_BENCH_ISA"
#: glibc's string and memory functions: the x86-64-v4 features it picks AVX-512 (EVEX) variants by
_GLIBC_AVX512 = ("AVX512F", "AVX512BW", "AVX512CD", "AVX512DQ", "AVX512VL")
#: what keeps each library that picks its kernels by the CPU on its AVX2 ones
AVX2_ENV = {
    # numpy 2.4 dispatches on x86-64 levels (X86_V3 = AVX2 + FMA, X86_V4 = AVX-512) and two
    # AVX-512 groups; it ignores names its build does not know, so the readings check it
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    # faiss 1.13+ wheels are one module dispatching at run time; the level must be upper case
    # (anything else aborts the process)
    "FAISS_SIMD_LEVEL": "AVX2",
    # older faiss wheels: the loader's choice of swigfaiss_avx2 over swigfaiss_avx512 (upper
    # case: the loader compares it so); a one-module wheel falls back to its only module
    "FAISS_OPT_LEVEL": "AVX2",
    # every OpenBLAS copy (numpy's, scipy's, faiss's) reads it
    "OPENBLAS_CORETYPE": "Haswell",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ARROW_USER_SIMD_LEVEL": "AVX2",
    "GLIBC_TUNABLES": "glibc.cpu.hwcaps=" + ",".join("-" + f for f in _GLIBC_AVX512),
    # synthreview's own stage-one C kernels (grouped_search.SIMD_LEVEL_VARIABLE)
    "SYNTHREVIEW_SIMD_LEVEL": "AVX2",
}
#: OpenBLAS kernels that use AVX-512
_OPENBLAS_AVX512 = ("skylakex", "cooperlake", "sapphirerapids")
#: the numpy dispatch targets that use AVX-512
_NUMPY_AVX512 = ("X86_V4", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR")


def add_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--isa`` option, as every benchmark that takes it spells it."""
    parser.add_argument(
        "--isa", choices=ISAS, default="native",
        help="native: the libraries' own choice of instruction set; avx2: their AVX2 code paths "
        "on this core (restarts the process with the variables that cap each library, then "
        "checks that each one took; exit status 2 if one did not)",
    )  # fmt: skip


def parse_isa(argv: Sequence[str] | None = None) -> str:
    """``--isa`` from the command line alone (the rest left to the benchmark's parser);
    ``parser.error`` (exit status 2, naming ``--isa``) on a bad value."""
    parser = argparse.ArgumentParser(add_help=False)
    add_argument(parser)
    known, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    return known.isa


def restricted_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with :data:`AVX2_ENV` set (glibc's tunables appended to any already there)."""
    out = dict(env)
    for name, value in AVX2_ENV.items():
        if name == "GLIBC_TUNABLES" and env.get(name):
            value = f"{env[name]}:{value}"
        out[name] = value
    out[MARK] = "avx2"
    return out


def enter(argv: Sequence[str] | None = None) -> str:
    """The ``--isa`` asked for; for ``avx2`` in a process not yet restricted, this process is
    replaced by the same command under :func:`restricted_env` (it does not return).

    Call it before the benchmark loads numpy, faiss or torch (the new process starts over
    anyway; earlier is only quicker).
    """
    isa = parse_isa(argv)
    if isa == "avx2" and os.environ.get(MARK) != "avx2":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, sys.orig_argv, restricted_env(os.environ))
    return isa


def _fd1_during(action: Callable[[], object]) -> str:
    """What C code wrote to file descriptor 1 while ``action`` ran (oneDNN's and MKL's verbose
    lines go there, past Python's ``sys.stdout``)."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    libc.fflush(None)
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(1)
        os.dup2(tmp.fileno(), 1)
        try:
            action()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode(errors="replace")


def _torch_readings() -> dict[str, str]:
    import torch

    def convolve() -> None:  # big enough that torch hands it to oneDNN
        with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
            torch.nn.functional.conv2d(torch.ones(8, 16, 32, 32), torch.ones(16, 16, 3, 3))

    def multiply() -> None:
        with torch.backends.mkl.verbose(torch.backends.mkl.VERBOSE_ON):
            x = torch.ones(64, 64)
            _ = x @ x

    onednn = [
        line.split("isa:", 1)[1]
        for line in _fd1_during(convolve).splitlines()
        if ",cpu,isa:" in line
    ]
    mkl = [line for line in _fd1_during(multiply).splitlines() if "Product build" in line]
    return {
        "torch ATen capability": torch.backends.cpu.get_cpu_capability(),
        "torch oneDNN isa": onednn[0] if onednn else "(not read)",
        "torch MKL": mkl[0].split(" architecture ", 1)[-1] if mkl else "(not read)",
    }


def _glibc_reading() -> str:
    """glibc's x86-64 levels in force for a process with this environment (``ld.so
    --list-diagnostics`` in a child: glibc offers no reading from inside)."""
    for loader in ("/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"):
        if not Path(loader).is_file():
            continue
        try:
            out = subprocess.run(
                [loader, "--list-diagnostics"], capture_output=True, text=True, timeout=30
            ).stdout
        except (OSError, subprocess.SubprocessError):
            break
        values = dict(
            line.split("=", 1) for line in out.splitlines() if line.startswith("dl_hwcaps_subdirs")
        )
        names = values.get("dl_hwcaps_subdirs", "").strip('"').split(":")
        try:
            active = int(values.get("dl_hwcaps_subdirs_active", ""), 16)
        except ValueError:
            break
        on = [name for bit, name in enumerate(names) if active >> bit & 1]
        return " ".join(on) if on else "baseline only"
    return "(not read)"


def _synthreview_kernel() -> str:
    """The stage-one C kernel ``synthreview.grouped_search`` runs in this process."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's synthreview
    try:
        from synthreview import grouped_search
    except Exception:  # a reading, not a check: problems() names it
        return "(not read)"
    return grouped_search.KERNEL or "none (not built, or capped)"


def readings() -> dict[str, str]:
    """What each library chose in this process: name -> reading (``"(not read)"`` where it
    could not be asked)."""
    import faiss
    import pyarrow
    import scipy.linalg  # noqa: F401  (loads scipy's OpenBLAS, so threadpoolctl sees it)
    from numpy._core._multiarray_umath import __cpu_features__
    from numpy.lib.introspect import opt_func_info
    from threadpoolctl import threadpool_info

    out = {"restriction": os.environ.get(MARK, "none (native)")}
    out["numpy AVX-512 features on"] = (
        " ".join(f for f in _NUMPY_AVX512 if __cpu_features__.get(f)) or "none"
    )
    chosen: dict[str, int] = {}
    for signatures in opt_func_info().values():
        for info in signatures.values():
            chosen[info["current"]] = chosen.get(info["current"], 0) + 1
    out["numpy ufunc loops by target"] = ", ".join(f"{k} {v}" for k, v in sorted(chosen.items()))
    config = getattr(faiss, "SIMDConfig", None)
    module = next((m for m in sys.modules if m.startswith("faiss.swigfaiss")), "?")
    level = config.get_level_name() if config is not None else "(no SIMDConfig)"
    out["faiss module"] = f"{module} (faiss {faiss.__version__})"
    out["faiss SIMD level"] = level
    out["BLAS kernels"] = (
        ", ".join(
            f"{Path(lib['filepath']).name.split('-')[0]} {lib.get('architecture', '?')}"
            for lib in threadpool_info()
            if lib["internal_api"] in ("openblas", "mkl", "blis")
        )
        or "(none loaded)"
    )
    out.update(_torch_readings())
    out["pyarrow SIMD level"] = pyarrow.runtime_info().simd_level
    out["glibc x86-64 levels"] = _glibc_reading()
    out["synthreview stage-one kernel"] = _synthreview_kernel()
    out["environment"] = (
        ", ".join(f"{k}={os.environ[k]}" for k in (*AVX2_ENV, "OMP_NUM_THREADS") if k in os.environ)
        or "none of the variables"
    )
    return out


def problems(found: Mapping[str, str]) -> list[str]:
    """Each library of :func:`readings` still on an AVX-512 path, or not read (empty: every
    restriction of ``--isa avx2`` in force)."""
    bad = []

    def need(key: str, ok: bool) -> None:
        if not ok:
            bad.append(f"{key}: {found.get(key, '(missing)')}")

    need("numpy AVX-512 features on", found.get("numpy AVX-512 features on") == "none")
    loops = found.get("numpy ufunc loops by target", "")
    need(
        "numpy ufunc loops by target",
        "X86_V3" in loops and not any(t in loops for t in _NUMPY_AVX512),
    )
    module = found.get("faiss module", "")
    need("faiss module", "swigfaiss" in module and "avx512" not in module)
    # a one-module wheel says its level; an older one's module name is the level
    level = found.get("faiss SIMD level")
    need("faiss SIMD level", level == "AVX2" or (level == "(no SIMDConfig)"
         and "avx2" in found.get("faiss module", "")))  # fmt: skip
    kernels = found.get("BLAS kernels", "").lower()
    need("BLAS kernels", "haswell" in kernels and not any(k in kernels for k in _OPENBLAS_AVX512))
    need("torch ATen capability", found.get("torch ATen capability", "").upper() == "AVX2")
    onednn = found.get("torch oneDNN isa", "")
    need("torch oneDNN isa", "AVX2" in onednn and "512" not in onednn and "AMX" not in onednn)
    need("torch MKL", found.get("torch MKL", "(not read)") != "(not read)"
         and "512" not in found.get("torch MKL", ""))  # fmt: skip
    need("pyarrow SIMD level", found.get("pyarrow SIMD level") == "avx2")
    glibc = found.get("glibc x86-64 levels", "")
    need("glibc x86-64 levels", "x86-64-v3" in glibc and "x86-64-v4" not in glibc)
    kernel = found.get("synthreview stage-one kernel", "")
    need("synthreview stage-one kernel", kernel == "avx2" or kernel.startswith("none"))
    return bad


def report(isa: str, found: Mapping[str, str], where: str) -> list[str]:
    """The lines a benchmark prints: the restriction, each reading, and for ``avx2`` the
    verdict. ``where`` names the process read (``this process``, ``the server``)."""
    lines = [f"isa {isa} ({where}):"]
    lines += [f"  {key:<30} {value}" for key, value in found.items()]
    if isa == "avx2":
        bad = problems(found)
        lines.append(
            "  every library on its AVX2 code paths (AVX2 instruction set on this AVX-512 core, "
            "not an AVX2 machine)"
            if not bad
            else "  NOT IN FORCE: " + "; ".join(bad)
        )
    return lines


def check(isa: str, found: Mapping[str, str], where: str) -> None:
    """Print :func:`report`; exit status 2 when ``avx2`` was asked for and a library is not on
    its AVX2 code paths."""
    for line in report(isa, found, where):
        sys.stdout.write(line + "\n")
    sys.stdout.flush()
    if isa == "avx2" and problems(found):
        sys.stderr.write(f"--isa avx2 is not in force in {where}; nothing measured\n")
        sys.exit(2)


def probe(env: Mapping[str, str]) -> dict[str, str]:
    """:func:`readings` of a fresh Python process with exactly ``env`` (a server's environment,
    read from ``/proc``): what the libraries choose under it on this CPU."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--json"],
        env=dict(env), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"probe": f"(failed, status {done.returncode}: {done.stderr.strip()[-500:]})"}


def process_env(pid: int) -> dict[str, str]:
    """The environment process ``pid`` was started with (Linux ``/proc/PID/environ``)."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return dict(
        item.decode(errors="replace").split("=", 1) for item in raw.split(b"\0") if b"=" in item
    )


def main() -> None:
    """Print this process's readings (``--json``: one JSON line, for :func:`probe`)."""
    if "--json" in sys.argv[1:]:
        sys.stdout.write(json.dumps(readings()) + "\n")
        return
    isa = enter()
    check(isa, readings(), "this process")


if __name__ == "__main__":
    main()
