"""Reference risks from ``anonymeter`` 1.1.0 (it pins numpy < 2, so it lives in its own venv).

Run once::

    python3 -m venv /tmp/ref-anonymeter && /tmp/ref-anonymeter/bin/pip install anonymeter==1.1.0
    /tmp/ref-anonymeter/bin/python tests/reference/anonymeter_reference.py

Writes ``anonymeter_reference.json``: the input tables (training, synthetic, control) and each
evaluator's risk with its 95 % confidence interval; ``tests/test_privacy_reference.py`` runs our
WP29 risks on the same tables and checks that each lands inside anonymeter's interval.
The inputs have no missing values and equal training / control sizes, where both methods agree
by construction (anonymeter counts a missing pair as a mismatch and corrects for unequal sizes).
"""

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

rng = np.random.default_rng(11)


def population(n: int) -> pd.DataFrame:
    age = rng.integers(18, 90, n)
    return pd.DataFrame(
        {
            "age": age,
            "income": np.round(rng.lognormal(10, 0.6, n), 0),
            "hours": rng.integers(10, 70, n),
            "sex": rng.choice(["F", "M"], n),
            "job": rng.choice(
                ["clerk", "nurse", "driver", "cook", "pilot"], n, p=[0.4, 0.3, 0.15, 0.1, 0.05]
            ),
            "city": rng.choice([f"c{i}" for i in range(12)], n),
        }
    )


n = 1000
train, control = population(n), population(n)
# a partly leaky generator: 40 % verbatim training rows, 60 % fresh rows
synthetic = pd.concat([train.sample(400, random_state=1), population(600)], ignore_index=True)
synthetic = synthetic.sample(frac=1, random_state=2).reset_index(drop=True)

risks = {}
for mode, n_attacks in (("univariate", 300), ("multivariate", 500)):
    ev = SinglingOutEvaluator(train, synthetic, control=control, n_attacks=n_attacks, n_cols=3)
    ev.evaluate(mode=mode)
    r = ev.risk()
    risks[f"singling_out_{mode}"] = {"risk": r.value, "ci": list(r.ci), "n_attacks": n_attacks}
aux = (["age", "income", "hours"], ["sex", "job", "city"])
ev = LinkabilityEvaluator(
    train, synthetic, aux_cols=aux, n_attacks=n, control=control, n_neighbors=1
)
r = ev.evaluate(n_jobs=1).risk()
risks["linkability"] = {"risk": r.value, "ci": list(r.ci), "aux_cols": aux}
for secret in ("income", "job", "city"):
    others = [c for c in train.columns if c != secret]
    ev = InferenceEvaluator(
        train, synthetic, control=control, aux_cols=others, secret=secret, n_attacks=n
    )
    r = ev.evaluate(n_jobs=1).risk()
    risks[f"inference:{secret}"] = {"risk": r.value, "ci": list(r.ci)}

out = {
    "package": "anonymeter",
    "version": version("anonymeter"),
    "numpy": np.__version__,
    "pandas": pd.__version__,
    "inputs": {
        k: v.to_dict(orient="list")
        for k, v in (("train", train), ("synthetic", synthetic), ("control", control))
    },
    "risks": risks,
}
Path(__file__).with_suffix(".json").write_text(json.dumps(out, indent=1, default=float) + "\n")
print(out["version"], json.dumps(risks, default=float))  # noqa: T201 (a script run by hand)
