"""Model auditing: judge every synthetic row against fresh real rows, remove copies, keep the rest.

Alaa et al. (2022), §1 ("Model auditing as a novel use case") and §5.1 ("Improving synthetic data
via model auditing"): α-Precision and Authenticity are per-row, so a reviewer can discard rows
outside the α-support of the real data or flagged as copies and release the rest unchanged.

The paper's per-row tests remove a large part of *any* sample: the authenticity test (ratio
``d(ŷ, x*)/NND(x*) <= 1``) flags about half of a fresh real sample by construction. So every
per-row rule here is calibrated on the holdout (``synthreview.release.calibration``): a row is
flagged when its statistic lies beyond the holdout's ``level`` quantile of the same statistic,
and the audit states each rule's expected loss on real data next to what it removes.

Rules (``RULES``) and their statistics:

* ``drop_unauthentic``: authenticity ratio (encoder space, ``synthreview.release.evidence``; the
  embedding's ratio when no encoded rows are given), low = suspicious. Default on.
* ``drop_exact_copy``: the row equals a training row (row hashes of the privacy section). Its
  rate on real data is the holdout's exact-copy share. Default on.
* ``drop_holdout_copy``: the row equals a holdout record (row hashes of the privacy section): a
  real person the generator never saw, released as synthetic. Its rate on real data is the
  share of holdout rows that equal another holdout row (leave-one-out). Default on.
* ``drop_outside_alpha``: α-level in the evaluation embedding, high = suspicious; calibrated
  so the holdout loses at most ``level``, or a fixed ``alpha``. Default on.
* ``drop_too_close``: distance to the closest training row, low = suspicious. Default off (on a
  table with near-duplicate records it sees almost nothing that the ratio does not).
* ``drop_qi_unique``: the row's quasi-identifiers (``--quasi-identifiers``) belong to exactly
  one training person (prosecutor risk 1, :mod:`synthreview.metrics.privacy.quasi`). Its rate on
  real data is the holdout's share of such rows (about 15 % on Adult with 7 quasi-identifiers:
  a heavy cost, hence off by default).
* trace reviews add ``synthreview.metrics.glucose.trace_rules.TRACE_RULES`` (readings outside
  the sensor range, implausible rates of change, windows drawn from a memorised subject),
  passed as ``traces=`` and kept in ``attrs["trace_rules"]``; each states its own threshold and
  expected false-positive rate on real traces. Default on.

Modes (``Thresholds.mode``): ``"quantile"`` (default, ``level`` = 1 %), ``"strict"``
(Benjamini–Hochberg at ``fdr`` on conformal p-values) and ``"paper"`` (α = 0.95 and the
paper's ratio ``<= 1`` in the embedding; about half of real data is lost, shown as such).
The paper's ratio stays the authenticity *score* of the fidelity section in every mode.

Person-level reviews (``--person COLUMN``): when the candidate carries person ids, a row whose
synthetic person has another row flagged by any rule is flagged too (``drop_person_rows``), so
a person's rows are curated together; the holdout reference groups holdout rows by their people
the same way. A candidate whose person column is empty (the generator did not keep ids) is
curated row by row, and the audit says so (``attrs["person"]``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.stats import beta

from synthreview.errors import ConfigError, DataError
from synthreview.metrics.fidelity.section import FidelityReport
from synthreview.metrics.glucose.trace_rules import SWITCHES
from synthreview.metrics.privacy.section import PrivacyReport
from synthreview.release import calibration as cal
from synthreview.release.evidence import CopyEvidence
from synthreview.release.table import RULES, STATISTICS, evidence_frame
from synthreview.results import to_jsonable

__all__ = [
    "COPY_RULES",
    "DEFAULT_LEVEL",
    "PERSON_RULE",
    "RULES",
    "SMALL_HOLDOUT",
    "CopyCounts",
    "RealRecords",
    "Thresholds",
    "apply_thresholds",
    "audit_table",
    "copy_counts",
    "default_thresholds",
    "holdout_audit",
    "real_records",
    "rule_overlaps",
    "rule_summary",
]

#: a trace review's rule evidence: per-row columns and each rule's label, threshold and rate
TraceRules = tuple[pd.DataFrame, dict]
#: default holdout quantile of every calibrated rule: a fresh real sample loses about 1 % per rule
DEFAULT_LEVEL = 0.01
#: default holdout loss of the calibrated α-support rule
DEFAULT_ALPHA_LOSS = 0.005
#: holdouts up to this many rows: a rule's stated loss of a fresh sample is the one measured on
#: the holdout at this size (leave-one-out), not the large-sample formula
SMALL_HOLDOUT = 500
#: the paper's fixed α when the "paper" mode is chosen without one
PAPER_ALPHA = 0.95
#: rule of a person-level review: another row of the same (synthetic) person was flagged
PERSON_RULE = "drop_person_rows"
PERSON_LABEL = "another row of the same person flagged"
#: audit rules that flag copies (the α-rule flags poor fidelity, judged by the IPα rule instead)
COPY_RULES = ("drop_unauthentic", "drop_too_close", "drop_exact_copy")


@dataclass(frozen=True)
class Thresholds:
    """What the reviewer removes from a candidate before release.

    Attributes
    ----------
    mode : {"quantile", "strict", "paper"}
        How per-row rules are thresholded (see the module docstring).
    level : float
        Holdout quantile of the ``"quantile"`` mode, in (0, 0.5): the expected share of a fresh
        real sample each copy rule removes. Default 0.01.
    alpha_loss : float
        Holdout loss of the calibrated α-rule (the holdout's ``1 - alpha_loss`` quantile of the
        α-level), in (0, 0.5). Default 0.005, so the default rules together remove about 1.5 %
        of a fresh real sample (the issue's budget: at most 2 %).
    fdr : float
        Benjamini–Hochberg false-discovery rate of the ``"strict"`` mode, in (0, 1).
    alpha : float or None
        Fixed α of the α-support rule in (0, 1]; ``None`` calibrates it on the holdout (in the
        ``"paper"`` mode ``None`` means 0.95).
    use_alpha, drop_unauthentic, drop_too_close, drop_exact_copies, drop_holdout_copies : bool
        Switch each rule on or off.
    drop_implausible, drop_memorised_subjects : bool
        Trace reviews only: the plausibility rules (sensor range, rate of change) and the
        memorised-subject rule.
    drop_qi_unique : bool
        Remove rows whose quasi-identifiers single out one training person. Default off.
    """

    mode: str = "quantile"
    level: float = DEFAULT_LEVEL
    alpha_loss: float = DEFAULT_ALPHA_LOSS
    fdr: float = 0.05
    alpha: float | None = None
    use_alpha: bool = True
    drop_unauthentic: bool = True
    drop_too_close: bool = False
    drop_exact_copies: bool = True
    drop_holdout_copies: bool = True
    drop_implausible: bool = True
    drop_memorised_subjects: bool = True
    drop_qi_unique: bool = False

    def __post_init__(self) -> None:
        if self.mode not in cal.MODES:
            raise ConfigError(f"mode must be one of {list(cal.MODES)}; got {self.mode!r} instead")
        for name in ("level", "alpha_loss"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 < float(value) < 0.5):
                raise ConfigError(f"{name} must be in (0, 0.5); got {value!r} instead")
        if not (isinstance(self.fdr, (int, float)) and 0.0 < float(self.fdr) < 1.0):
            raise ConfigError(f"fdr must be in (0, 1); got {self.fdr!r} instead")
        if self.alpha is not None and not (
            isinstance(self.alpha, (int, float)) and 0.0 < float(self.alpha) <= 1.0
        ):
            raise ConfigError(f"alpha must be in (0, 1] or None; got {self.alpha!r} instead")

    @property
    def fixed_alpha(self) -> float | None:
        """The α the α-rule uses as a fixed threshold, or None when it is calibrated."""
        if self.alpha is not None:
            return float(self.alpha)
        return PAPER_ALPHA if self.mode == "paper" else None

    def to_dict(self) -> dict[str, object]:
        """JSON-ready thresholds."""
        return to_jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


def default_thresholds(privacy: object = None, **changes: object) -> Thresholds:
    """The default thresholds (holdout quantile 1 %, α calibrated), with ``changes`` applied.

    ``privacy`` is accepted for callers of the former signature and not needed: every
    threshold is now calibrated on the holdout when the audit is built.
    """
    del privacy
    return Thresholds(**changes)


def audit_table(
    fidelity: FidelityReport | None,
    privacy: PrivacyReport | None,
    thresholds: Thresholds | None = None,
    *,
    copies: CopyEvidence | None = None,
    traces: TraceRules | None = None,
) -> pd.DataFrame:
    """One row per synthetic row: its evidence, the rules that fire and why.

    Parameters
    ----------
    fidelity : FidelityReport or None
        ``samples`` / ``holdout_samples`` give α-levels, the paper's ``authentic`` flag and (when
        ``copies`` is None) the authenticity ratio in the embedding.
    privacy : PrivacyReport or None
        ``dcr`` gives distances to training and holdout rows, exact copies and the holdout's
        distances and exact-copy share.
    thresholds : Thresholds, default=Thresholds()
    copies : CopyEvidence, optional
        Encoder-space authenticity ratios and nearest training rows
        (``evidence.copy_evidence_for(report, name)``); preferred over the embedding's ratio.
    traces : (DataFrame, dict), optional
        ``trace_rules.trace_rule_columns(glucose)`` of a trace review: per-row flags, reasons
        and evidence of the trace rules, and each rule's label, threshold and expected rate.

    Returns
    -------
    pandas.DataFrame
        ``row`` (0-based position in the input file), the statistics (``alpha_level``,
        ``authenticity_ratio``, ``train_distance``, ...) with, for calibrated ones, the share of
        holdout rows at least as extreme (``*_holdout_quantile``), ``nearest_train_row``,
        ``top_columns``, one boolean column per rule in ``RULES``, ``reasons`` (``"; "``-joined,
        each with the statistic and the threshold it crossed) and ``removed``. A rule whose
        evidence is missing never removes a row. ``attrs`` holds the thresholds, each rule's
        threshold value and its expected false-positive rate on real data.
    """
    if fidelity is None and privacy is None:
        raise DataError("audit_table needs 'fidelity' or 'privacy' results; got neither")
    frame, calibration = evidence_frame(fidelity, privacy, copies, holdout=False)
    frame = _with_trace_rules(frame, traces)
    frame = _with_persons(frame, privacy, holdout=False)
    frame.attrs["calibration"] = calibration
    return apply_thresholds(frame, thresholds or Thresholds())


def _with_persons(frame: pd.DataFrame, privacy: PrivacyReport | None, *, holdout: bool):
    """The rows' person ids (``person``) and ``attrs["person"]`` of a person-level review."""
    person = getattr(privacy, "person_level", None)
    if person is None:
        return frame
    ids = person.holdout_ids if holdout else person.synthetic_ids
    grouped = ids is not None and len(ids) == len(frame)
    attrs = dict(frame.attrs)
    if grouped:
        frame = frame.assign(person=np.asarray(ids)[frame["row"].to_numpy(dtype=np.int64)])
    frame.attrs.update(attrs)
    frame.attrs["person"] = {"column": person.column, "grouped": bool(grouped)}
    return frame


def _with_trace_rules(frame: pd.DataFrame, traces: TraceRules | None) -> pd.DataFrame:
    """The trace rules' columns joined by row position (rows are the traces in file order)."""
    if traces is None or not traces[1]:
        return frame
    columns, rules = traces
    if len(columns) != len(frame):
        raise DataError(
            f"trace rule evidence has {len(columns)} rows; expected one per audited trace "
            f"({len(frame)})"
        )
    out = pd.concat([frame.reset_index(drop=True), columns.reset_index(drop=True)], axis=1)
    out.attrs["trace_rules"] = dict(rules)
    return out


def _all_rules(audit: pd.DataFrame) -> dict[str, str]:
    """Rule column -> label: ``RULES``, the trace rules and the person rule the audit carries."""
    extra = audit.attrs.get("trace_rules") or {}
    person = {PERSON_RULE: PERSON_LABEL} if _grouped(audit) else {}
    return {**RULES, **{rule: info["label"] for rule, info in extra.items()}, **person}


def _grouped(audit: pd.DataFrame) -> bool:
    return bool((audit.attrs.get("person") or {}).get("grouped")) and "person" in audit


def kept_audit(audit: pd.DataFrame, kept_rows: np.ndarray, thresholds: Thresholds) -> pd.DataFrame:
    """The audit of the rows ``kept_rows`` of ``audit`` as a table of their own (curated).

    Every statistic of a kept row is the submitted row's (same training rows, holdout and
    encoder), so the curated set's audit is that of its rows, numbered as in the curated file
    and judged again under ``thresholds``. Person-level audits are not cut this way (a
    person's rows are judged together): they must be audited again.
    """
    if "person" in audit.attrs:
        raise ConfigError("a person-level audit must be computed again, not cut to kept rows")
    kept = audit.iloc[np.asarray(kept_rows, dtype=np.int64)].reset_index(drop=True)
    kept["row"] = np.arange(len(kept), dtype=np.int64)
    kept.attrs = dict(audit.attrs)
    return apply_thresholds(kept, thresholds)


def holdout_audit(
    fidelity: FidelityReport | None,
    privacy: PrivacyReport | None,
    thresholds: Thresholds | None = None,
    *,
    copies: CopyEvidence | None = None,
    traces: TraceRules | None = None,
) -> pd.DataFrame:
    """The same audit applied to the holdout rows: what a fresh real sample would lose.

    Each holdout row is compared with the *other* holdout rows (leave-one-out counts), so the
    shares are honest estimates of a rule's loss on fresh real data. Exact copies of holdout
    rows are those at encoder distance 0 from a training row (``copies``); without ``copies``
    that rule never fires here. Returns an empty table without holdout evidence. ``traces``
    (``trace_rule_columns(glucose, holdout=True)``) adds the trace rules of the holdout traces.
    """
    frame, calibration = evidence_frame(fidelity, privacy, copies, holdout=True)
    if traces is not None and len(frame) == len(traces[0]):
        frame = _with_trace_rules(frame, traces)
    if len(frame):
        frame = _with_persons(frame, privacy, holdout=True)
    frame.attrs["calibration"] = calibration
    return apply_thresholds(frame, thresholds or Thresholds())


def _flags(
    frame: pd.DataFrame, stat: str, thresholds: Thresholds, calibration: dict[str, dict]
) -> tuple[np.ndarray, float, float]:
    """Flags, threshold value and expected loss on real data of one calibrated statistic."""
    info = calibration.get(stat) or {}
    n = int(info.get("n", 0))
    counts = frame[f"{stat}_count"].to_numpy(dtype=float)
    if thresholds.mode == "strict":
        flags = cal.bh_flags(counts, n, thresholds.fdr)
        # a fresh real sample gives conformal p-values >= 1/(n+1): BH at fdr rejects none of
        # them unless fdr * m / (n + 1) exceeds the smallest, i.e. essentially never
        return flags, float("nan"), 0.0 if n else float("nan")
    extreme = info.get("extreme")
    tied = (
        None
        if extreme is None
        else cal.extreme_ties(frame[stat].to_numpy(dtype=float), counts, float(extreme))
    )
    flags = cal.quantile_flags(counts, n, thresholds.level, tied=tied)
    threshold = (info.get("thresholds") or {}).get(f"{thresholds.level:g}", float("nan"))
    return flags, float(threshold), cal.expected_quantile_loss(n, thresholds.level)


def apply_thresholds(audit: pd.DataFrame, thresholds: Thresholds) -> pd.DataFrame:
    """Recompute the rule columns, ``reasons`` and ``removed`` of an audit table (cheap).

    ``audit.attrs["calibration"]`` (set by ``audit_table``) carries each statistic's holdout
    size and the threshold values of the usual levels; the dashboard calls this on every
    control change.
    """
    calibration = audit.attrs.get("calibration") or {}
    trace_rules = audit.attrs.get("trace_rules") or {}
    rules = _all_rules(audit)
    # the person rule's column goes too: an audit re-judged without grouping must not keep it
    dropped = (*rules, PERSON_RULE, "reasons", "removed")
    out = audit[[c for c in audit.columns if c not in dropped]].copy()
    n = len(out)
    off = np.zeros(n, dtype=bool)
    fired: dict[str, np.ndarray] = {}
    values: dict[str, float] = {}
    expected: dict[str, float] = {}
    texts: dict[str, list[str]] = {}
    fixed_alpha = thresholds.fixed_alpha

    if thresholds.use_alpha and fixed_alpha is not None:
        level = cal.rounded(out["alpha_level"].to_numpy(dtype=float))
        with np.errstate(invalid="ignore"):
            fired["drop_outside_alpha"] = level > fixed_alpha
        values["drop_outside_alpha"] = fixed_alpha
        expected["drop_outside_alpha"] = float(calibration.get("alpha_level", {}).get(
            "fixed_fpr", {}).get(f"{fixed_alpha:g}", float("nan")))  # fmt: skip
    elif thresholds.use_alpha:
        alpha_rule = replace(thresholds, level=thresholds.alpha_loss)
        flags, value, fpr = _flags(out, "alpha_level", alpha_rule, calibration)
        fired["drop_outside_alpha"], values["drop_outside_alpha"] = flags, value
        expected["drop_outside_alpha"] = fpr
    if thresholds.drop_unauthentic and thresholds.mode == "paper":
        fired["drop_unauthentic"] = ~out["authentic"].fillna(True).to_numpy(dtype=bool)
        values["drop_unauthentic"] = 1.0
        expected["drop_unauthentic"] = float(calibration.get("paper_unauthentic_fpr", math.nan))
    elif thresholds.drop_unauthentic:
        flags, value, fpr = _flags(out, "authenticity_ratio", thresholds, calibration)
        fired["drop_unauthentic"], values["drop_unauthentic"] = flags, value
        expected["drop_unauthentic"] = fpr
    if thresholds.drop_too_close and thresholds.mode != "paper":
        flags, value, fpr = _flags(out, "train_distance", thresholds, calibration)
        fired["drop_too_close"], values["drop_too_close"] = flags, value
        expected["drop_too_close"] = fpr
    if thresholds.drop_exact_copies:
        fired["drop_exact_copy"] = out["exact_copy"].fillna(False).to_numpy(dtype=bool)
        expected["drop_exact_copy"] = float(calibration.get("exact_copy_fpr", math.nan))
    if thresholds.drop_qi_unique and "qi_unique" in out:
        fired["drop_qi_unique"] = out["qi_unique"].fillna(False).to_numpy(dtype=bool)
        expected["drop_qi_unique"] = float(calibration.get("qi_unique_fpr", math.nan))
    if thresholds.drop_holdout_copies and "holdout_copy" in out:
        fired["drop_holdout_copy"] = out["holdout_copy"].fillna(False).to_numpy(dtype=bool)
        expected["drop_holdout_copy"] = float(calibration.get("holdout_copy_fpr", math.nan))

    for rule in RULES:
        out[rule] = fired.get(rule, off)
        texts[rule] = _reason_texts(rule, out, thresholds, values.get(rule))
    for rule, info in trace_rules.items():
        # precomputed per-trace flags; the switch decides whether they remove the row
        if getattr(thresholds, SWITCHES[rule]):
            fired[rule] = out[f"{rule}_flag"].to_numpy(dtype=bool)
            values[rule], expected[rule] = info.get("threshold"), info.get("expected_fpr")
        out[rule] = fired.get(rule, off)
        texts[rule] = out[f"{rule}_reason"].astype(str).tolist()
    if _grouped(audit):
        # a person's rows go together: any flagged row flags the person's other rows
        base = out[[r for r in rules if r != PERSON_RULE]].to_numpy(dtype=bool).any(axis=1)
        ids = out["person"].astype(str).to_numpy()
        fired[PERSON_RULE] = np.isin(ids, ids[base]) & ~base
        out[PERSON_RULE] = fired[PERSON_RULE]
        column = audit.attrs["person"]["column"]
        texts[PERSON_RULE] = [f"another row of {column} {p!r} was flagged" for p in ids]
    matrix = out[list(rules)].to_numpy(dtype=bool)
    out["reasons"] = [
        "; ".join(texts[r][i] for r, hit in zip(rules, row, strict=True) if hit)
        for i, row in enumerate(matrix)
    ]
    out["removed"] = matrix.any(axis=1)
    out.attrs["calibration"] = calibration
    out.attrs["trace_rules"] = trace_rules
    if "person" in audit.attrs:
        out.attrs["person"] = audit.attrs["person"]
    if "search" in audit.attrs:  # what the every-row search of a sampled review measured
        out.attrs["search"] = audit.attrs["search"]
    out.attrs["thresholds"] = thresholds.to_dict()
    out.attrs["rules"] = {
        r: {"active": r in fired, "threshold": values.get(r), "expected_fpr": expected.get(r)}
        for r in rules
    }
    return out


def _reason_texts(rule: str, out: pd.DataFrame, t: Thresholds, value: float | None) -> list[str]:
    """Why each row would be removed by ``rule``: statistic and the threshold it crossed."""
    n = len(out)
    if rule in ("drop_exact_copy", "drop_holdout_copy", "drop_qi_unique"):
        return [RULES[rule]] * n
    stat = STATISTICS[rule]
    x = out[stat].to_numpy(dtype=float)
    if t.mode == "paper" and rule == "drop_unauthentic":
        return [f"authenticity ratio {v:.3g} <= 1 (paper's rule)" for v in x]
    if rule == "drop_outside_alpha" and t.fixed_alpha is not None:
        return [f"α-level {v:.3g} > α = {t.fixed_alpha:g}" for v in x]
    label = {"alpha_level": "α-level", "authenticity_ratio": "authenticity ratio",
             "train_distance": "distance to training"}[stat]  # fmt: skip
    q = out[f"{stat}_holdout_quantile"].to_numpy(dtype=float)
    if t.mode == "strict":
        return [
            f"{label} {v:.3g} (holdout quantile {p:.2%}; BH q={t.fdr:g})"
            for v, p in zip(x, q, strict=True)
        ]
    level = t.alpha_loss if stat == "alpha_level" else t.level
    side = "above" if stat == "alpha_level" else "below"
    quantile = 1 - level if stat == "alpha_level" else level
    n = int(((out.attrs.get("calibration") or {}).get(stat) or {}).get("n", 0))
    # on a small holdout the cut is its most extreme value: said so, not as a quantile
    where = (
        f"the holdout's {'largest' if stat == 'alpha_level' else 'smallest'} value"
        if cal.quantile_index(n, level) == 0
        else f"the holdout's {quantile:.1%} quantile"
    )
    if value is None or not math.isfinite(value):
        return [f"{label} {v:.3g} {side} {where}" for v in x]
    return [f"{label} {a} {side} {where} ({b})" for a, b in (_apart(v, value) for v in x)]


def _apart(value: float, threshold: float) -> tuple[str, str]:
    """``value`` and ``threshold`` with enough significant digits to tell them apart (a row
    beyond its threshold never reads as a tie: 0.9971 above 0.9969, not 0.997 above 0.997)."""
    digits = 3
    while digits < 12 and f"{value:.{digits}g}" == f"{threshold:.{digits}g}":
        digits += 1
    return f"{value:.{digits}g}", f"{threshold:.{digits}g}"


def rule_summary(audit: pd.DataFrame, reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows each rule removes, next to what it would remove of fresh real data.

    Index: rule names of ``RULES`` and a final ``"any"`` (the union). Columns: ``label``,
    ``active``, ``flagged`` (by this rule), ``only`` (by this rule and no other), ``share``
    (``flagged`` over all rows), ``threshold`` (the statistic's threshold value),
    ``expected_fpr`` (the rule's expected loss on a fresh real sample, from the calibration;
    for ``"any"`` the holdout's union share) and, with ``reference`` (``holdout_audit``),
    ``reference_share`` (the holdout's share, leave-one-out). On a holdout of at most
    :data:`SMALL_HOLDOUT` rows every rule's ``expected_fpr`` is the share measured on it: at
    that size the order statistics are coarse and the measured loss is what a fresh sample of
    this size loses.
    """
    labels = _all_rules(audit)
    matrix = audit[list(labels)].to_numpy(dtype=bool)
    n_hits = matrix.sum(axis=1)
    info = audit.attrs.get("rules") or {}
    rows = {
        rule: {
            "label": labels[rule],
            "active": bool((info.get(rule) or {}).get("active", True)),
            "flagged": int(matrix[:, j].sum()),
            "only": int((matrix[:, j] & (n_hits == 1)).sum()),
            "threshold": (info.get(rule) or {}).get("threshold"),
            "expected_fpr": (info.get(rule) or {}).get("expected_fpr"),
        }
        for j, rule in enumerate(labels)
    }
    rows["any"] = {"label": "removed by any rule", "active": True,
                   "flagged": int((n_hits > 0).sum()), "only": 0}  # fmt: skip
    summary = pd.DataFrame.from_dict(rows, orient="index")
    summary["threshold"] = pd.to_numeric(summary["threshold"], errors="coerce")
    summary["expected_fpr"] = pd.to_numeric(summary["expected_fpr"], errors="coerce")
    summary["share"] = summary["flagged"] / max(len(audit), 1)
    if reference is not None:
        ref = rule_summary(reference) if len(reference) else None
        summary["reference_share"] = (
            ref["share"].reindex(summary.index) if ref is not None else np.nan
        )
        if ref is not None:
            summary.loc["any", "expected_fpr"] = ref.loc["any", "share"]
        if ref is not None and len(reference) <= SMALL_HOLDOUT:
            measured = summary["reference_share"].notna()
            summary.loc[measured, "expected_fpr"] = summary.loc[measured, "reference_share"]
    return summary


def rule_overlaps(audit: pd.DataFrame) -> pd.DataFrame:
    """How many rows each combination of rules removes (an UpSet-style table).

    One row per combination that occurs among removed rows: a boolean column per rule,
    ``rules`` (``" + "``-joined labels) and ``n_rows``; most frequent first, ties in rule order.
    """
    labels = _all_rules(audit)
    matrix = audit.loc[audit["removed"].to_numpy(dtype=bool), list(labels)].astype(bool)
    if matrix.empty:
        return pd.DataFrame(
            {
                **{r: pd.Series(dtype=bool) for r in labels},
                "rules": pd.Series(dtype=str),
                "n_rows": pd.Series(dtype=np.int64),
            }
        )
    counts = matrix.value_counts(sort=False).rename("n_rows").reset_index()
    counts["rules"] = [
        " + ".join(labels[r] for r in labels if row[r]) for _, row in counts.iterrows()
    ]
    counts = counts.sort_values(
        ["n_rows", *labels], ascending=[False] * (1 + len(labels)), kind="stable"
    ).reset_index(drop=True)
    counts["n_rows"] = counts["n_rows"].astype(np.int64)
    return counts[[*labels, "rules", "n_rows"]]


@dataclass(frozen=True)
class RealRecords:
    """Candidate rows that *are* records of the real data, against a fresh sample's coincidence.

    A row that equals a training or holdout record on every analysed column (row hashes of the
    privacy section) is a real person's record released as synthetic. Real data repeats itself
    by coincidence (Adult holds duplicate rows; a table of a few categorical columns repeats
    most rows), so the share is judged against the holdout's: the share of holdout rows that
    equal a training row or *another* holdout row (leave-one-out) is what a fresh real sample
    of the same population shares with the real and holdout data.

    Attributes
    ----------
    matched, n_rows : int
        Rows that equal a training or holdout record, of ``n_rows``.
    in_training, in_holdout : int
        Rows that equal a training record, a holdout record (a row may be both).
    share : float
        ``matched / n_rows``.
    lower : float
        One-sided 95 % Clopper–Pearson lower bound of ``share`` (0 when nothing matched).
    reference : float
        The holdout's share (see above); NaN without a holdout.
    n_reference : int
        Holdout rows behind ``reference``.
    excess : float
        ``max(lower - reference, 0)``; NaN without a reference.
    """

    matched: int
    n_rows: int
    in_training: int
    in_holdout: int
    share: float
    lower: float
    reference: float
    n_reference: int
    excess: float

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields."""
        return to_jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


def _matches(frame: pd.DataFrame, column: str) -> np.ndarray | None:
    """Boolean flags of ``column`` (NA = not matched), or None when the column has no evidence."""
    if column not in frame or not len(frame) or frame[column].isna().all():
        return None
    return frame[column].fillna(False).to_numpy(dtype=bool)


def real_records(audit: pd.DataFrame, reference: pd.DataFrame | None) -> RealRecords | None:
    """:class:`RealRecords` of an audit table (``audit_table``) against its ``holdout_audit``.

    Reads the evidence columns ``exact_copy`` (equals a training row) and ``holdout_copy``
    (equals a holdout row), whatever rules are switched on: the policy's ``real_records`` rule
    judges what the candidate *is*, not what the reviewer chose to remove. Returns None when
    the audit holds neither column's evidence (no privacy section): the rule is then
    unmeasured, never passed.
    """
    training, holdout = _matches(audit, "exact_copy"), _matches(audit, "holdout_copy")
    if training is None and holdout is None:
        return None
    n = len(audit)
    none = np.zeros(n, dtype=bool)
    training = none if training is None else training
    holdout = none if holdout is None else holdout
    k = int((training | holdout).sum())
    lower = float(beta.ppf(0.05, k, n - k + 1)) if k > 0 else 0.0
    ref, n_ref = math.nan, 0
    if reference is not None and len(reference):
        ref_training = _matches(reference, "exact_copy")
        ref_holdout = _matches(reference, "holdout_copy")
        if ref_holdout is not None:  # without the leave-one-out flags there is no reference
            n_ref = len(reference)
            both = ref_holdout | (False if ref_training is None else ref_training)
            ref = float(np.mean(both))
    excess = max(lower - ref, 0.0) if math.isfinite(ref) else math.nan
    return RealRecords(
        matched=k,
        n_rows=n,
        in_training=int(training.sum()),
        in_holdout=int(holdout.sum()),
        share=k / n,
        lower=lower,
        reference=ref,
        n_reference=n_ref,
        excess=excess,
    )


@dataclass(frozen=True)
class CopyCounts:
    """A candidate's copies, counted once: what every page and ``report.html`` state.

    Counted on the audit table (:func:`audit_table`, every row of the candidate), so the
    Overview, the Privacy tiles, the Audit page and the record cannot count them differently.

    Attributes
    ----------
    n_rows : int
        Rows of the candidate.
    exact_training, exact_holdout : int
        Rows equal to a training record, to a holdout record (row hashes of every analysed
        column; a row may be both), whatever the removal rules are.
    real_records : int
        Rows equal to a training or a holdout record: what the ``real_records`` rule counts.
    near_copies : int or None
        Rows closer to a training row than fresh real rows are (the distance rule); None when
        the rule is off.
    unauthentic : int or None
        Rows the authenticity rule flags (too close to one training row); None when it is off.
    flagged_as_copies : int
        Rows any copy rule flags (authenticity, distance, exact copy of a training row): what
        the ``audit_copies`` rule counts.
    removed : int
        Rows removed by any rule (the α-support and holdout-copy rules included).
    unit : str
        What a row is, in words: ``"rows"``, or ``"day traces"`` in a glucose review (each
        audited row is one day trace), so every page counts in the data's own unit.
    """

    n_rows: int
    exact_training: int
    exact_holdout: int
    real_records: int
    near_copies: int | None
    unauthentic: int | None
    flagged_as_copies: int
    removed: int
    unit: str = "rows"

    def rows(self) -> list[tuple[str, str]]:
        """``(what, count)`` lines of the breakdown, in reading order (``"off"`` for a rule
        that is switched off)."""

        def count(n: int | None) -> str:
            return "off" if n is None else f"{n:,}"

        return [
            (f"{self.unit} of the candidate", count(self.n_rows)),
            ("equal to a training record", count(self.exact_training)),
            ("equal to a holdout record", count(self.exact_holdout)),
            ("equal to a real record (training or holdout)", count(self.real_records)),
            ("near copies (closer to training than fresh rows)", count(self.near_copies)),
            ("unauthentic (too close to one training row)", count(self.unauthentic)),
            ("flagged as copies by any copy rule", count(self.flagged_as_copies)),
            ("removed by any rule", count(self.removed)),
        ]

    def sentence(self) -> str:
        """One line: ``"12 of 5,000 rows equal a real record (11 in training, 1 in the
        holdout); 30 flagged as copies; 41 removed by any rule"``."""
        return (
            f"{self.real_records:,} of {self.n_rows:,} {self.unit} equal a real record "
            f"({self.exact_training:,} in training, {self.exact_holdout:,} in the holdout); "
            f"{self.flagged_as_copies:,} flagged as copies; {self.removed:,} removed by any rule"
        )

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields."""
        return to_jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


def copy_counts(audit: pd.DataFrame) -> CopyCounts:
    """:class:`CopyCounts` of an audit table (:func:`audit_table` or :func:`apply_thresholds`).

    Exact matches are read from the evidence columns (``exact_copy``, ``holdout_copy``) as
    :func:`real_records` reads them; the rule counts from the rule columns, a rule that is
    switched off (``attrs["rules"]``) counting None.
    """
    n = len(audit)
    none = np.zeros(n, dtype=bool)
    training = _matches(audit, "exact_copy")
    holdout = _matches(audit, "holdout_copy")
    training = none if training is None else training
    holdout = none if holdout is None else holdout
    active = audit.attrs.get("rules") or {}

    def flags(rule: str) -> np.ndarray:
        return audit[rule].to_numpy(dtype=bool) if rule in audit else none

    def counted(rule: str) -> int | None:
        on = bool((active.get(rule) or {}).get("active", rule in audit))
        return int(flags(rule).sum()) if on else None

    copies = np.zeros(n, dtype=bool)
    for rule in COPY_RULES:
        copies |= flags(rule)
    removed = audit["removed"].to_numpy(dtype=bool) if "removed" in audit else none
    return CopyCounts(
        n_rows=n,
        exact_training=int(training.sum()),
        exact_holdout=int(holdout.sum()),
        real_records=int((training | holdout).sum()),
        near_copies=counted("drop_too_close"),
        unauthentic=counted("drop_unauthentic"),
        flagged_as_copies=int(copies.sum()),
        removed=int(removed.sum()),
        # a glucose audit's rows are day traces (its trace rules are in attrs)
        unit="day traces" if audit.attrs.get("trace_rules") else "rows",
    )
