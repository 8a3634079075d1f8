"""Writes ``privacy_pinned.json``: privacy values pinned before the speed work of issue 26.

The distance searches behind distance to closest record, WP29, Gower and the radius counts
(Monte-Carlo counting) were made faster without changing a value;
``tests/test_privacy_pinned.py`` compares today's values with these (1e-12). Re-run only when
a change of *values* is intended and reviewed:

    python tests/reference/privacy_pinned.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from synthreview.encoding import TabularEncoder  # noqa: E402
from synthreview.io.schema import Schema  # noqa: E402
from synthreview.metrics.privacy.attacks import encoded_nearest, radius_counts  # noqa: E402
from synthreview.metrics.privacy.gower import gower_nearest  # noqa: E402
from synthreview.metrics.privacy.section import distance_to_closest_record, row_hashes  # noqa: E402
from synthreview.metrics.privacy.wp29 import wp29_risks  # noqa: E402

OUT = Path(__file__).with_suffix(".json")
NUMERIC = ["age", "hours", "income"]
CATEGORICAL = ["job", "city", "sex"]


def tables(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, Schema]:
    """Mixed real, holdout and synthetic tables: ties, missing cells, 5 % copies of real rows."""
    rng = np.random.default_rng(seed)

    def table(n: int) -> pd.DataFrame:
        frame = pd.DataFrame({
            "age": rng.integers(18, 90, n).astype(float),
            "hours": rng.choice([20.0, 38.0, 40.0, 45.0, 60.0], n),
            "income": np.round(rng.lognormal(10, 0.6, n), 1),
            "job": rng.choice(["a", "b", "c", "d", "e"], n, p=[0.4, 0.3, 0.15, 0.1, 0.05]),
            "city": rng.choice([f"c{i}" for i in range(12)], n),
            "sex": rng.choice(["f", "m"], n),
        })  # fmt: skip
        frame.loc[rng.random(n) < 0.03, "income"] = np.nan
        frame.loc[rng.random(n) < 0.03, "job"] = None
        return frame

    real, holdout, synthetic = table(600), table(500), table(800)
    copies = rng.choice(len(real), 40, replace=False)
    synthetic.iloc[:40] = real.iloc[copies].to_numpy()
    schema = Schema({c: "numeric" if c in NUMERIC else "categorical" for c in real.columns})
    return real, holdout, synthetic, schema


def values() -> dict[str, list]:
    """Every pinned value, as JSON-ready lists (NaN as None)."""
    real, holdout, synthetic, schema = tables()
    encoder = TabularEncoder(schema).fit(real)
    real_x, synthetic_x, holdout_x = (encoder.transform(t) for t in (real, synthetic, holdout))
    blocks = [encoder.groups[c] for c in schema.categorical]
    cols = schema.analysed
    dcr = distance_to_closest_record(
        real_x, synthetic_x, holdout_x, real_hashes=row_hashes(real[cols]),
        synthetic_hashes=row_hashes(synthetic[cols]), holdout_hashes=row_hashes(holdout[cols]),
        categorical_blocks=blocks,
    )  # fmt: skip
    gower_d, gower_i = gower_nearest(holdout[cols], synthetic[cols], categorical=CATEGORICAL)
    knn_d, knn_i = encoded_nearest(holdout_x, synthetic_x, k=3, categorical_blocks=blocks)
    radii = np.quantile(knn_d[:, 0], [0.2, 0.5, 0.8])
    counts = radius_counts(holdout_x, synthetic_x, np.tile(radii, (len(holdout_x), 1)))
    wp = wp29_risks(
        real, synthetic, holdout, numeric=NUMERIC, categorical=CATEGORICAL,
        n_attacks=200, n_inference_attacks=200, seed=0,
    ).to_dict()  # fmt: skip
    out = {
        "dcr_to_train": dcr.synthetic_to_train,
        "dcr_train_index": dcr.nearest_train_index,
        "dcr_to_holdout": dcr.synthetic_to_holdout,
        "dcr_nndr": dcr.nndr,
        "dcr_holdout_to_train": dcr.holdout_to_train,
        "dcr_share": [dcr.share_closer_to_train, dcr.exact_copies],
        "gower_distance": gower_d,
        "gower_index": gower_i,
        "encoded_knn_distance": knn_d.ravel(),
        "encoded_knn_index": knn_i.ravel(),
        "radius_counts": counts.ravel(),
    }
    out = {k: [None if isinstance(v, float) and np.isnan(v) else v
               for v in np.asarray(a, dtype=float).tolist()] for k, a in out.items()}  # fmt: skip
    out["wp29"] = json.loads(json.dumps(wp, default=float))
    return out


if __name__ == "__main__":
    OUT.write_text(json.dumps(values(), indent=None, sort_keys=True) + "\n")
    sys.stdout.write(f"wrote {OUT}\n")
