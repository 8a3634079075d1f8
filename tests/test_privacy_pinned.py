"""Privacy values pinned before the speed work of issue 26 (``tests/reference/privacy_pinned.py``).

Distance to closest record, Gower nearest rows, the encoded k-NN with its same-tuple pre-pass,
the radius counts of Monte-Carlo counting and the WP29 risks on a small mixed table (ties,
missing cells, planted copies) must equal the values written before the searches behind
them were made faster: distances within 1e-12, indices, counts and rows exactly.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

REFERENCE = Path(__file__).parent / "reference" / "privacy_pinned.py"


@pytest.fixture(scope="module")
def pinned_and_now() -> tuple[dict, dict]:
    spec = importlib.util.spec_from_file_location("privacy_pinned", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return json.loads(REFERENCE.with_suffix(".json").read_text()), module.values()


def _same(pinned, now, where: str) -> None:
    if isinstance(pinned, dict):
        assert sorted(pinned) == sorted(now), where
        for key in pinned:
            _same(pinned[key], now[key], f"{where}.{key}")
    elif isinstance(pinned, list):
        assert len(pinned) == len(now), where
        for i, (a, b) in enumerate(zip(pinned, now, strict=True)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(pinned, float) and isinstance(now, int | float):
        assert (math.isnan(pinned) and math.isnan(now)) or math.isclose(
            pinned, now, rel_tol=1e-12, abs_tol=1e-12
        ), f"{where}: pinned {pinned!r}, now {now!r}"
    else:
        assert pinned == now, f"{where}: pinned {pinned!r}, now {now!r}"


@pytest.mark.parametrize(
    "key",
    [
        "dcr_to_train", "dcr_train_index", "dcr_to_holdout", "dcr_nndr", "dcr_holdout_to_train",
        "dcr_share", "gower_distance", "gower_index", "encoded_knn_distance",
        "encoded_knn_index", "radius_counts", "wp29",
    ],
)  # fmt: skip
def test_value_equals_the_pinned_one(pinned_and_now, key):
    pinned, now = pinned_and_now
    _same(pinned[key], now[key], key)


def test_the_comparison_sees_a_change(pinned_and_now):
    pinned, _ = pinned_and_now
    changed = list(pinned["dcr_to_train"])
    changed[3] = changed[3] + 1e-9
    with pytest.raises(AssertionError, match=r"dcr_to_train\[3\]"):
        _same(pinned["dcr_to_train"], changed, "dcr_to_train")
