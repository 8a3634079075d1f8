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


class SynthreviewError(Exception):
    """Base class of the errors synthreview raises deliberately."""


class DataError(SynthreviewError, ValueError):
    """An input table or trace file cannot be reviewed as given."""


class ConfigError(SynthreviewError, ValueError):
    """A reviewer option (target column, formula, policy file, threshold) is invalid."""


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for the given input; the function returns ``nan``."""
