"""Build of the one C extension, ``synthreview.fused_minima`` (stage one of the grouped search in
vector registers; see ``synthreview/grouped_search.py``). The rest of the project's metadata is in
pyproject.toml.

The extension is optional: where it does not compile (no C compiler, not GCC-compatible) the
install goes on without it and the search keeps its faiss / numpy stage one, with the same results.
It needs only Python's headers, no numpy ones (arrays pass through the buffer protocol).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "synthreview.fused_minima",
            sources=["synthreview/fused_minima.c"],
            depends=["synthreview/fused_minima_kernel.h"],
            # the kernels pick their instruction set at run time (function target attributes),
            # so the build flags name none: the same build runs on any x86-64 CPU
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
