"""Generators a review can run: ``fit_sample(train, n, seed)`` callables named ``module:function``.

A shadow-model attack (:mod:`synthreview.metrics.privacy.shadow`) trains the generator under
review many times on reference data with and without a target record. The generator is handed
over as a plain Python callable that is importable on the reviewing machine::

    def fit_sample(train: pandas.DataFrame, n: int, seed: int) -> pandas.DataFrame:
        '''Fit on ``train`` and return ``n`` synthetic rows with the columns of ``train``.'''

and named on the command line (``--generator pkg.module:function``) or in the dashboard by the
same text. :func:`load_generator` checks the name at the boundary (module importable, attribute
present and callable) so a typo stops the review before anything is computed;
:func:`check_generated` checks what a call returned.

Built-in generators with this signature (for tests, demonstrations and a reviewer's own
sanity checks) live in :mod:`synthreview.generators.builtin`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

import pandas as pd

from synthreview.errors import ConfigError, DataError

__all__ = ["FitSample", "check_generated", "load_generator"]

#: ``fit_sample(train, n, seed) -> DataFrame``
FitSample = Callable[[pd.DataFrame, int, int], pd.DataFrame]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def load_generator(spec: str) -> FitSample:
    """The callable named by ``spec`` (``"package.module:function"``).

    Parameters
    ----------
    spec : str
        A dotted module path, a colon and an attribute path (``"pkg.mod:Class.method"`` also
        works). The module is imported with :func:`importlib.import_module`, so it must be
        importable on this machine (installed, or on ``PYTHONPATH``).

    Returns
    -------
    callable
        ``fit_sample(train, n, seed) -> DataFrame``.

    Raises
    ------
    ConfigError
        ``spec`` is not of the form ``module:function``, the module cannot be imported, or the
        attribute is missing or not callable; the message names the option and what was
        received.
    """
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ConfigError(
            "option generator must be 'module:function' (an importable fit_sample(train, n, "
            f"seed) callable); got {spec!r} instead"
        )
    module_name, attribute = (part.strip() for part in spec.split(":"))
    if not _NAME.match(module_name) or not _NAME.match(attribute):
        raise ConfigError(
            "option generator must be 'module:function' with dotted Python names on both sides; "
            f"got {spec!r} instead"
        )
    try:
        target: object = importlib.import_module(module_name)
    except Exception as exc:  # any failure while importing user code is a bad option
        raise ConfigError(
            f"option generator names module {module_name!r}, which cannot be imported on this "
            f"machine ({type(exc).__name__}: {exc}); got {spec!r}"
        ) from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ConfigError(
                f"option generator: module {module_name!r} has no attribute {attribute!r}; got "
                f"{spec!r} instead"
            )
        target = getattr(target, part)
    if not callable(target):
        raise ConfigError(
            f"option generator must name a callable fit_sample(train, n, seed); {spec!r} is a "
            f"{type(target).__name__}"
        )
    return target  # type: ignore[return-value]


def check_generated(output: object, train: pd.DataFrame, *, spec: str) -> pd.DataFrame:
    """``output`` of a generator call, checked: a DataFrame with every column of ``train``.

    Extra columns are dropped and the columns put in ``train``'s order; the rows are kept as
    returned (a generator may return more or fewer than asked for, but at least one).

    Raises
    ------
    DataError
        ``output`` is not a DataFrame, lacks columns of ``train`` or has no rows.
    """
    if not isinstance(output, pd.DataFrame):
        raise DataError(
            f"generator {spec!r} must return a pandas DataFrame; got {type(output).__name__} "
            "instead"
        )
    missing = [c for c in train.columns if c not in output.columns]
    if missing:
        raise DataError(
            f"generator {spec!r} must return the columns of its training table; it left out "
            f"{missing}"
        )
    if len(output) == 0:
        raise DataError(f"generator {spec!r} returned no rows")
    return output[list(train.columns)].reset_index(drop=True)
