"""Reference AUCs from the ``domias`` package (PyPI domias 0.0.5, ``domias.baselines``).

Run once, outside the project environment's packages list::

    pip download --no-deps domias==0.0.5 -d /tmp/domias-dl
    python -m zipfile -e /tmp/domias-dl/domias-0.0.5-py3-none-any.whl /tmp/domias-pkg
    PYTHONPATH=/tmp/domias-pkg python tests/reference/domias_reference.py

(domias pins nothing we lack; its wheel is imported beside numpy/scipy/torch, not installed.)
Writes ``domias_reference.json``: the input arrays (members, non-members, synthetic, reference)
and the ROC AUC of each baseline score; ``tests/test_privacy_reference.py`` feeds the same
arrays to our attacks.
"""

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
from domias.baselines import MC, GAN_leaks, GAN_leaks_cal, kde_baseline
from sklearn.metrics import roc_auc_score

rng = np.random.default_rng(7)
mix = rng.normal(size=(3, 3))
members = np.round(rng.normal(size=(150, 3)) @ mix, 4)
nonmembers = np.round(rng.normal(size=(150, 3)) @ mix, 4)
reference = np.round(rng.normal(size=(400, 3)) @ mix, 4)
# a leaky generator: half noisy copies of members, half fresh rows
synthetic = np.round(
    np.vstack(
        [members + rng.normal(scale=0.05, size=members.shape), rng.normal(size=(150, 3)) @ mix]
    ),
    4,
)
x_test = np.vstack([members, nonmembers])
y_test = np.r_[np.ones(150), np.zeros(150)]
eq1, eq2 = kde_baseline(x_test, synthetic, reference)
scores = {
    "logan_kde": eq1,
    "domias_kde": eq2,
    "mc": MC(x_test, synthetic),
    "gan_leaks": GAN_leaks(x_test, synthetic),
    "gan_leaks_cal": GAN_leaks_cal(x_test, synthetic, reference),
}
out = {
    "package": "domias",
    "version": version("domias"),
    "inputs": {
        "members": members.tolist(),
        "nonmembers": nonmembers.tolist(),
        "synthetic": synthetic.tolist(),
        "reference": reference.tolist(),
    },
    "auc": {k: float(roc_auc_score(y_test, v)) for k, v in scores.items()},
}
Path(__file__).with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n")
print(out["version"], out["auc"])  # noqa: T201 (a script run by hand)
