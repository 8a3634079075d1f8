"""Exceptions and warnings raised by synthreview.

Hierarchy::

    Exception
    └── SynthreviewError          base of everything synthreview raises on purpose
        ├── DataError             an input table or trace file cannot be reviewed as given
        └── ConfigError           a reviewer option (target, formula, policy, threshold) is invalid
    UserWarning
    └── UndefinedMetricWarning    a metric is undefined for this input and returns ``nan``

Messages name the argument, what was expected and what was received, e.g.
``"synthetic 'copula' is missing columns ['age']; expected the columns of real"``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class SynthreviewError(Exception):
    """Base class of the errors synthreview raises deliberately."""


class DataError(SynthreviewError, ValueError):
    """An input table or trace file cannot be reviewed as given."""


class ConfigError(SynthreviewError, ValueError):
    """A reviewer option (target column, formula, policy file, threshold) is invalid."""


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for the given input; the function returns ``nan``."""


def error_message(exc: BaseException) -> str:
    """``"TypeName: message"``, how a failed metric or section is reported in place."""
    return f"{type(exc).__name__}: {exc}"


def attempt(part: str, errors: dict[str, str], fn: Callable[[], T]) -> T | None:
    """Run one part of a section; a failure is logged and recorded in ``errors[part]``.

    Returns ``fn()``, or None when it raised: one failing metric is shown with its error in
    place and the other parts of the section still run.
    """
    try:
        return fn()
    except Exception as exc:
        log.exception("%s failed", part)
        errors[part] = error_message(exc)
        return None
