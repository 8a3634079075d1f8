"""Train CTGAN once on the demo's training rows and ship its sample as a demo candidate.

The demo's other candidates come from baselines written here; this one comes from a generator
nobody on this project wrote (CTGAN, Xu et al. 2019, as packaged by the SDV project), so the
review is shown on the output of a real deep generative model. Training takes minutes, so it
is done once, by a developer, and the sample is committed:

* ``synthreview/datasets/adult_ctgan.csv.gz`` - ``DEMO_TRAIN_ROWS`` sampled rows;
* ``synthreview/datasets/adult_ctgan.json`` - how they were made, and the sha256 of the
  training table (``demo.tables(seed=0).real``). ``demo.tables`` adds the ``ctgan`` candidate
  only when its own training table has that digest: for any other seed or size the CTGAN model
  may have seen holdout rows, and its privacy results would be meaningless.

``ctgan`` pins ``pandas<3``, so it runs in its own environment, never in the project's::

    python -m venv --system-site-packages /tmp/ctgan-venv
    /tmp/ctgan-venv/bin/pip install ctgan==0.12.1
    /tmp/ctgan-venv/bin/python scripts/make_ctgan_candidate.py [--epochs 150]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from synthreview import demo  # noqa: E402

OUT = REPO / "synthreview" / "datasets"
SEED = 0


def main(argv: list[str] | None = None) -> None:
    """Fit CTGAN on ``demo.tables(seed=0).real`` and write the sample and its record."""
    import ctgan

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=150)
    args = parser.parse_args(argv)

    review = demo.tables(seed=SEED)
    train = review.real.frame.copy()
    discrete = review.schema.categorical
    whole = [
        c
        for c in review.schema.numeric
        if np.array_equal(train[c].dropna(), train[c].dropna().round())
    ]
    for col in discrete:
        train[col] = train[col].astype(object)

    torch.set_num_threads(1)  # one thread: reproducible float sums, and the machine is shared
    torch.manual_seed(SEED)
    np.random.seed(SEED)  # noqa: NPY002  ctgan samples from numpy's global generator
    model = ctgan.CTGAN(epochs=args.epochs, verbose=False)
    started = time.perf_counter()
    model.fit(train, discrete_columns=discrete)
    seconds = time.perf_counter() - started
    sample = model.sample(len(train))
    # CTGAN returns floats for every continuous column; counts and ages go back to integers
    sample[whole] = sample[whole].round()

    raw = pd.DataFrame({c: demo._cell_text(sample[c]) for c in train.columns})
    (OUT / "adult_ctgan.csv.gz").write_bytes(
        gzip.compress(demo._csv_bytes(raw), compresslevel=9, mtime=0)
    )
    record = {
        "generator": f"ctgan {ctgan.__version__} (CTGAN, Xu et al. 2019, SDV project)",
        "options": {"epochs": args.epochs, "discrete_columns": discrete, "seed": SEED},
        "train": {"function": "synthreview.demo.tables", "seed": SEED, "rows": len(train)},
        "train_sha256": review.real.sha256,
        "rows": len(sample),
        "fit_seconds": round(seconds, 1),
        "torch": torch.__version__,
        "pandas": pd.__version__,
    }
    (OUT / "adult_ctgan.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
