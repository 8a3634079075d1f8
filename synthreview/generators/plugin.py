"""Generators a review can run: ``fit_sample(train, n, seed)`` callables named ``module:function``.

A shadow-model attack (:mod:`synthreview.metrics.privacy.shadow`) trains the generator under
review many times on reference data with and without a target record. The generator is handed
over as a plain Python callable that is importable on the reviewing machine::

    def fit_sample(train: pandas.DataFrame, n: int, seed: int) -> pandas.DataFrame:
        '''Fit on ``train`` and return ``n`` synthetic rows with the columns of ``train``.'''

Generators are **installed, not typed**: a package declares its generators as entry points in the
``synthreview.generators`` group (as pytest finds its plugins)::

    [project.entry-points."synthreview.generators"]
    my_gan = "my_package.gan:fit_sample"

and :func:`installed_generators` lists them beside the built-ins (``copula``, ``memorise``). The
command line (whose user is the operator) takes an installed name or any ``module:function``;
the dashboard offers only the installed names, and free ``module:function`` text only when the
operator started the server with ``allow_generator_paths`` (:mod:`synthreview.serving`), because
importing a module named in a browser and calling it with the real training table would be code
execution for anyone who can open the page. :func:`load_generator` checks the name at the
boundary (installed, or module importable, attribute present and callable) so a typo stops the
review before anything is computed; :func:`check_generated` checks what a call returned.

Built-in generators with this signature (for tests, demonstrations and a reviewer's own
sanity checks) live in :mod:`synthreview.generators.builtin`.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from collections.abc import Callable

import pandas as pd

from synthreview.errors import ConfigError, DataError

__all__ = [
    "BUILTIN_GENERATORS",
    "ENTRY_POINT_GROUP",
    "FitSample",
    "check_generated",
    "installed_generators",
    "load_generator",
]

#: ``fit_sample(train, n, seed) -> DataFrame``
FitSample = Callable[[pd.DataFrame, int, int], pd.DataFrame]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
#: the entry-point group in which installed packages declare their generators
ENTRY_POINT_GROUP = "synthreview.generators"
#: the generators that ship with synthreview, by name (known without package metadata, so a
#: checkout that is not pip-installed has them too)
BUILTIN_GENERATORS: dict[str, str] = {
    "copula": "synthreview.generators.builtin:copula",
    "memorise": "synthreview.generators.builtin:memorise",
}


def installed_generators() -> dict[str, str]:
    """Every generator installed on this machine: name -> ``module:function``, sorted by name.

    The built-ins (:data:`BUILTIN_GENERATORS`) and the entry points of the
    :data:`ENTRY_POINT_GROUP` group of every installed distribution; a built-in name is never
    replaced by an entry point of the same name.
    """
    found = dict(BUILTIN_GENERATORS)
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry.name, entry.value)
    return dict(sorted(found.items()))


def load_generator(spec: str, *, allow_paths: bool = True) -> FitSample:
    """The callable named by ``spec``: an installed generator's name, or ``"module:function"``.

    Parameters
    ----------
    spec : str
        The name of an installed generator (:func:`installed_generators`, e.g. ``"copula"``),
        or a dotted module path, a colon and an attribute path (``"pkg.mod:Class.method"`` also
        works). The module is imported with :func:`importlib.import_module`, so it must be
        importable on this machine (installed, or on ``PYTHONPATH``).
    allow_paths : bool, default True
        Whether a ``module:function`` that is not an installed generator is accepted. The CLI
        (run by the operator) allows it; the dashboard only when the operator opted in
        (:mod:`synthreview.serving`). Nothing is imported when it is refused.

    Returns
    -------
    callable
        ``fit_sample(train, n, seed) -> DataFrame``.

    Raises
    ------
    ConfigError
        ``spec`` is neither an installed generator nor of the form ``module:function`` (or it is
        one and ``allow_paths`` is false), the module cannot be imported, or the attribute is
        missing or not callable; the message names the option and what was received.
    """
    installed = installed_generators()
    if isinstance(spec, str) and spec.strip() in installed:
        spec = installed[spec.strip()]
    elif isinstance(spec, str) and ":" in spec:
        normalised = ":".join(part.strip() for part in spec.split(":"))
        if normalised in installed.values():
            spec = normalised
        elif not allow_paths:
            raise ConfigError(
                "option generator must be one of the generators installed on this server "
                f"({', '.join(installed)}); free module:function names are allowed only when "
                f"the operator starts the dashboard with allow_generator_paths; got {spec!r}"
            )
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ConfigError(
            "option generator must be 'module:function' (an importable fit_sample(train, n, "
            f"seed) callable) or an installed generator ({', '.join(installed)}); got {spec!r} "
            "instead"
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
