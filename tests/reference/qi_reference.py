"""Reference k-anonymity from ``pycanon`` 1.3.6 and prosecutor risks counted by hand.

Run once (pycanon lives in its own venv)::

    python3 -m venv /tmp/pycanon-venv && /tmp/pycanon-venv/bin/pip install pycanon==1.3.6 pandas
    /tmp/pycanon-venv/bin/python tests/reference/qi_reference.py

Takes 600 rows of the bundled Adult sample (``random_state=36``; missing values written ``?``
so pycanon's pandas grouping keeps them), splits them into training (rows 0-299) and a
candidate (rows 300-599), and writes ``qi_reference.json``: the extract, pycanon's k-anonymity
of each table on four sets of quasi-identifiers, and, counted here with plain dictionaries (a
code path independent of :mod:`synthreview.metrics.privacy.quasi`), the candidate rows whose
combination occurs once in training and the mean prosecutor risk ``1 / f_k`` (0 when absent).
``tests/test_disclosure.py`` checks our numbers against these.
"""

import json
from collections import Counter
from importlib.metadata import version
from pathlib import Path

import pandas as pd
from pycanon.anonymity import k_anonymity

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[1] / "synthreview" / "datasets" / "adult.csv.gz"
QI_SETS = {
    "two": ["sex", "marital_status"],
    "three": ["sex", "race", "education"],
    "five": ["age", "sex", "race", "marital_status", "education"],
    "seven": ["age", "sex", "race", "native_country", "education", "marital_status", "occupation"],
}

frame = pd.read_csv(SOURCE).sample(600, random_state=36).reset_index(drop=True)
frame = frame[QI_SETS["seven"]].fillna("?")
train, candidate = frame.iloc[:300], frame.iloc[300:]
out = {
    "pycanon": version("pycanon"),
    "train": train.to_dict("list"),
    "candidate": candidate.to_dict("list"),
    "sets": {},
}
for name, qis in QI_SETS.items():
    counts = Counter(map(tuple, train[qis].to_numpy().tolist()))
    f = [counts.get(row, 0) for row in map(tuple, candidate[qis].to_numpy().tolist())]
    out["sets"][name] = {
        "quasi_identifiers": qis,
        "train_k": int(k_anonymity(train, qis)),
        "candidate_k": int(k_anonymity(candidate, qis)),
        "replayed": sum(1 for x in f if x == 1),
        "risk_mean": sum(1 / x for x in f if x) / len(f),
    }
(HERE / "qi_reference.json").write_text(json.dumps(out, indent=1) + "\n")
print({k: {a: b for a, b in v.items() if a != "quasi_identifiers"} for k, v in out["sets"].items()})  # noqa: T201
