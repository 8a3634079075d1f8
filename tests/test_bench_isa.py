"""The benchmarks' ``--isa`` option (``benchmarks/instruction_set.py``): its argument, the
environment it sets, and its check that each library took the restriction. No timings."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def _module():
    spec = importlib.util.spec_from_file_location(
        "instruction_set", BENCHMARKS / "instruction_set.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


instruction_set = _module()

#: what a process restricted to AVX2 reads on an AVX-512 core (numpy 2.4, faiss 1.15)
AVX2_READINGS = {
    "restriction": "avx2",
    "numpy AVX-512 features on": "none",
    "numpy ufunc loops by target": "X86_V3 369, baseline(X86_V2) 108",
    "faiss module": "faiss.swigfaiss (faiss 1.15.1)",
    "faiss SIMD level": "AVX2",
    "BLAS kernels": "libscipy_openblas Haswell, libopenblaso Haswell",
    "torch ATen capability": "AVX2",
    "torch oneDNN isa": "Intel AVX2",
    "torch MKL": "Intel(R) Architecture processors, Lnx 2.60GHz lp64 gnu_thread",
    "pyarrow SIMD level": "avx2",
    "glibc x86-64 levels": "x86-64-v3 x86-64-v2",
    "synthreview stage-one kernel": "avx2",
}
#: one reading per library as an unrestricted process on that core reads it
NATIVE = {
    "numpy AVX-512 features on": "X86_V4 AVX512_SKX AVX512_ICL",
    "numpy ufunc loops by target": "X86_V3 244, X86_V4 179, baseline(X86_V2) 54",
    "faiss SIMD level": "AVX512_VPOPCNT",
    "BLAS kernels": "libscipy_openblas SkylakeX, libopenblaso Haswell",
    "torch ATen capability": "AVX512",
    "torch oneDNN isa": "Intel AVX-512 with Intel DL Boost and bfloat16 support",
    "pyarrow SIMD level": "avx512",
    "glibc x86-64 levels": "x86-64-v4 x86-64-v3 x86-64-v2",
    "synthreview stage-one kernel": "avx512f",
}


@pytest.mark.parametrize("script", ["bench_pages.py", "bench_browser_run.py", "bench_fidelity.py"])
def test_bad_isa_exits_2_naming_the_argument(script):
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--isa", "avx512"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2
    assert "argument --isa: invalid choice: 'avx512'" in done.stderr
    assert "native" in done.stderr and "avx2" in done.stderr


def test_isa_defaults_to_native_and_reads_only_its_own_option():
    assert instruction_set.parse_isa([]) == "native"
    assert instruction_set.parse_isa(["--rows", "500", "--isa", "avx2", "--poll", "1"]) == "avx2"


def test_restricted_env_sets_every_variable_and_keeps_glibc_tunables():
    env = instruction_set.restricted_env(
        {"PATH": "/bin", "GLIBC_TUNABLES": "glibc.malloc.arena_max=2"}
    )
    assert env["PATH"] == "/bin"
    assert env[instruction_set.MARK] == "avx2"
    for name, value in instruction_set.AVX2_ENV.items():
        if name != "GLIBC_TUNABLES":
            assert env[name] == value
    assert env["GLIBC_TUNABLES"] == (
        "glibc.malloc.arena_max=2:" + instruction_set.AVX2_ENV["GLIBC_TUNABLES"]
    )
    assert "-AVX512F" in env["GLIBC_TUNABLES"]


def test_problems_empty_when_every_library_reads_avx2():
    assert instruction_set.problems(AVX2_READINGS) == []


@pytest.mark.parametrize("key", sorted(NATIVE))
def test_one_library_left_on_avx512_is_named(key):
    found = {**AVX2_READINGS, key: NATIVE[key]}
    problems = instruction_set.problems(found)
    assert problems == [f"{key}: {NATIVE[key]}"]


@pytest.mark.parametrize("key", sorted(set(AVX2_READINGS) - {"restriction"}))
def test_a_reading_that_could_not_be_taken_is_a_problem(key):
    found = {**AVX2_READINGS, key: "(not read)"}
    assert [p.split(":")[0] for p in instruction_set.problems(found)] == [key]


def test_an_older_faiss_wheel_is_judged_by_its_module():
    found = {**AVX2_READINGS, "faiss SIMD level": "(no SIMDConfig)"}
    assert (
        instruction_set.problems({**found, "faiss module": "faiss.swigfaiss_avx2 (faiss 1.8.0)"})
        == []
    )
    assert instruction_set.problems(
        {**found, "faiss module": "faiss.swigfaiss_avx512 (faiss 1.8.0)"}
    ) == [
        "faiss module: faiss.swigfaiss_avx512 (faiss 1.8.0)",
        "faiss SIMD level: (no SIMDConfig)",
    ]


def test_native_reports_without_a_verdict():
    lines = instruction_set.report("native", NATIVE, "this process")
    assert lines[0] == "isa native (this process):"
    assert not any("NOT IN FORCE" in line or "AVX2 code paths" in line for line in lines)
    lines = instruction_set.report("avx2", {**AVX2_READINGS, **NATIVE}, "the server")
    assert lines[-1].startswith("  NOT IN FORCE: numpy")


def _cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


@pytest.mark.slow
@pytest.mark.skipif("avx2" not in _cpu_flags(), reason="needs an x86-64 CPU with AVX2 (Linux)")
def test_avx2_takes_in_every_installed_library():
    """The installed libraries still read the variables ``--isa avx2`` sets (a new numpy,
    faiss or torch that renamed one fails here, not in a benchmark's log)."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "instruction_set.py"), "--isa", "avx2"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "isa avx2 (this process):" in done.stdout
    assert "every library on its AVX2 code paths" in done.stdout
