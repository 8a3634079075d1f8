"""Turning result objects into JSON-ready values."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np


def to_jsonable(obj: Any) -> Any:
    """Convert dataclasses, numpy values, tuples and NaN into JSON-ready Python values.

    ``nan`` and infinities become ``None`` (JSON has no NaN). Objects with a ``to_dict`` method
    are converted through it.
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        value = float(obj)
        return value if math.isfinite(value) else None
    if hasattr(obj, "to_dict") and not isinstance(obj, type) and not hasattr(obj, "to_numpy"):
        return to_jsonable(obj.to_dict())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if hasattr(obj, "to_dict") and hasattr(obj, "to_numpy"):  # pandas objects
        if hasattr(obj, "columns"):
            return [to_jsonable(r) for r in obj.to_dict(orient="records")]
        return {str(k): to_jsonable(v) for k, v in obj.to_dict().items()}
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    return str(obj)
