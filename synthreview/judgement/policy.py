"""Release policy: pass / warn / fail thresholds per rule, read from a TOML file.

A policy turns the numbers of a review into the decision a release meeting needs. Every rule reads
one value from a candidate's ``to_dict()`` (the same JSON as in ``report.json``), so a verdict can
be recomputed from a filed report without re-running any metric. The shipped defaults live in
``synthreview/policies/default.toml``, where each rule is documented; a reviewer's file only needs
the rules it changes.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from synthreview.errors import ConfigError
from synthreview.judgement.rules import (
    Measured,
    as_number,
    measure_dcr_share,
    measure_discriminator_auc,
    measure_gap,
    measure_k_marginal,
    measure_mia_auc,
    measure_tstr_trtr_ratio,
    section_of,
)
from synthreview.results import to_jsonable

Verdict = Literal["pass", "warn", "fail", "n/a"]
VERDICTS: tuple[str, ...] = ("pass", "warn", "fail", "n/a")
_SEVERITY = {"n/a": 0, "pass": 1, "warn": 2, "fail": 3}


@dataclass(frozen=True)
class Rule:
    """One policy rule: thresholds on a value where ``direction`` says which way is better."""

    name: str
    pass_at: float
    fail_at: float
    direction: Literal["lower", "higher"]
    description: str
    enabled: bool = True
    k: int | None = None


@dataclass(frozen=True)
class Policy:
    """Rules by name, in the order they are reported, plus how unmeasured values count."""

    name: str
    rules: Mapping[str, Rule]
    missing: Verdict = "n/a"
    source: str = "default"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready policy (for report.json and the manifest)."""
        return to_jsonable(
            {
                "name": self.name,
                "source": self.source,
                "missing": self.missing,
                "rules": {
                    r.name: {
                        "pass": r.pass_at,
                        "fail": r.fail_at,
                        "direction": r.direction,
                        "enabled": r.enabled,
                        **({"k": r.k} if r.k is not None else {}),
                    }
                    for r in self.rules.values()
                },
            }
        )


@dataclass(frozen=True)
class RuleVerdict:
    """The verdict of one rule for one candidate, with the evidence behind it."""

    rule: str
    verdict: Verdict
    value: float | None
    pass_at: float
    fail_at: float
    direction: str
    description: str
    reference: float | None = None
    note: str = ""

    @property
    def message(self) -> str:
        """One line for logs and the CLI, e.g. ``"mia_auc = 0.93 (fail above 0.7)"``."""
        if self.value is None:
            return f"{self.rule}: not measured ({self.note or 'n/a'})"
        worse = "above" if self.direction == "lower" else "below"
        return (
            f"{self.rule} = {self.value:.4g} → {self.verdict} "
            f"(pass {'≤' if self.direction == 'lower' else '≥'} {self.pass_at:g}, "
            f"fail {worse} {self.fail_at:g})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready verdict."""
        return to_jsonable(
            {
                "rule": self.rule,
                "verdict": self.verdict,
                "value": self.value,
                "pass": self.pass_at,
                "fail": self.fail_at,
                "direction": self.direction,
                "reference": self.reference,
                "description": self.description,
                "note": self.note,
            }
        )


@dataclass(frozen=True)
class Verdicts:
    """Every rule's verdict for one candidate and the overall verdict."""

    overall: Verdict
    rules: tuple[RuleVerdict, ...] = field(default_factory=tuple)
    policy: str = "default"

    @property
    def failed(self) -> list[RuleVerdict]:
        """Rules that failed, in policy order."""
        return [r for r in self.rules if r.verdict == "fail"]

    def __getitem__(self, rule: str) -> RuleVerdict:
        for r in self.rules:
            if r.rule == rule:
                return r
        raise KeyError(rule)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"overall", "policy", "rules": {name: verdict}}``."""
        return {
            "overall": self.overall,
            "policy": self.policy,
            "rules": {r.rule: r.to_dict() for r in self.rules},
        }


#: rule name -> (direction, description, measure)
RULES: dict[str, tuple[str, str, Callable[[Mapping[str, Any], Rule], Measured]]] = {
    "mia_auc": ("lower", "membership-inference ROC AUC (worst attack)", measure_mia_auc),
    "dcr_share": (
        "lower",
        "share of synthetic rows closer to training than holdout",
        measure_dcr_share,
    ),
    "authenticity_gap": (
        "lower",
        "authenticity below the holdout reference",
        measure_gap("authenticity", "authenticity"),
    ),
    "ip_alpha": ("lower", "IPα shortfall vs the holdout reference", measure_gap("ip_alpha", "IPα")),
    "ir_beta": ("lower", "IRβ shortfall vs the holdout reference", measure_gap("ir_beta", "IRβ")),
    "discriminator_auc": (
        "lower",
        "real-vs-synthetic discriminator ROC AUC",
        measure_discriminator_auc,
    ),
    "k_marginal": ("higher", "k-marginal score (0-1000)", measure_k_marginal),
    "tstr_trtr_ratio": ("higher", "TSTR / TRTR (worst model)", measure_tstr_trtr_ratio),
}


# --- loading --------------------------------------------------------------------------------


def _default_text() -> str:
    return resources.files("synthreview").joinpath("policies/default.toml").read_text("utf-8")


def _parse(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"policy file {source} is not valid TOML: {exc}") from None


def _threshold(table: Mapping[str, Any], key: str, where: str) -> float:
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}.{key} must be a finite number; got {value!r}")
    return float(value)


def _build_rules(doc: Mapping[str, Any], base: Mapping[str, Rule], source: str) -> dict[str, Rule]:
    rules = dict(base)
    tables = doc.get("rules", {})
    if not isinstance(tables, Mapping):
        raise ConfigError(f"policy {source}: 'rules' must be a table of [rules.NAME] tables")
    for name, table in tables.items():
        where = f"policy {source}: [rules.{name}]"
        if name not in RULES:
            raise ConfigError(f"{where} is not a known rule; expected one of {sorted(RULES)}")
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where} must be a table; got {table!r}")
        extra = sorted(set(table) - {"pass", "fail", "enabled", "k"})
        if extra:
            raise ConfigError(f"{where} has unknown keys {extra}; expected pass, fail, enabled, k")
        old = rules.get(name)
        if old is None and not {"pass", "fail"} <= set(table):
            raise ConfigError(f"{where} must set both 'pass' and 'fail'")
        direction, description, _ = RULES[name]
        pass_at = _threshold(table, "pass", where) if "pass" in table else old.pass_at
        fail_at = _threshold(table, "fail", where) if "fail" in table else old.fail_at
        if (direction == "lower" and pass_at > fail_at) or (
            direction == "higher" and pass_at < fail_at
        ):
            better = "lower" if direction == "lower" else "higher"
            raise ConfigError(
                f"{where}: {better} is better for this rule, so 'pass' ({pass_at:g}) must not be "
                f"{'above' if better == 'lower' else 'below'} 'fail' ({fail_at:g})"
            )
        enabled = table.get("enabled", old.enabled if old else True)
        if not isinstance(enabled, bool):
            raise ConfigError(f"{where}.enabled must be true or false; got {enabled!r}")
        k = table.get("k", old.k if old else None)
        if name == "k_marginal" and (isinstance(k, bool) or k not in (1, 2, 3)):
            raise ConfigError(f"{where}.k must be 1, 2 or 3; got {k!r}")
        rules[name] = Rule(
            name,
            pass_at,
            fail_at,
            direction,
            description,
            enabled,  # type: ignore[arg-type]
            k if name == "k_marginal" else None,
        )
    return rules


def _build(doc: Mapping[str, Any], base: Policy | None, source: str) -> Policy:
    unknown = sorted(set(doc) - {"policy", "rules"})
    if unknown:
        raise ConfigError(
            f"policy {source} has unknown tables {unknown}; expected [policy], [rules.*]"
        )
    head = doc.get("policy", {})
    extra = sorted(set(head) - {"name", "missing"})
    if extra:
        raise ConfigError(
            f"policy {source}: [policy] has unknown keys {extra}; expected name, missing"
        )
    missing = head.get("missing", base.missing if base else "n/a")
    if missing not in VERDICTS:
        raise ConfigError(
            f"policy {source}: [policy].missing must be one of {list(VERDICTS)}; got {missing!r}"
        )
    rules = _build_rules(doc, base.rules if base else {}, source)
    ordered = {name: rules[name] for name in RULES if name in rules}
    return Policy(name=str(head.get("name", source)), rules=ordered, missing=missing, source=source)


def load_policy(path: str | Path | None = None) -> Policy:
    """Read a policy TOML; rules it does not mention keep the shipped defaults.

    Parameters
    ----------
    path : str or Path, optional
        Policy file. ``None`` returns the shipped ``policies/default.toml``.

    Raises
    ------
    ConfigError
        Unreadable file, invalid TOML, unknown rule or key, or thresholds in the wrong order.
    """
    default = _build(_parse(_default_text(), "default.toml"), None, "default.toml")
    if path is None:
        return default
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"policy file {path} cannot be read: {exc}") from None
    return _build(_parse(text, str(path)), default, path.name)


def parse_policy(text: str | bytes, *, source: str = "uploaded policy") -> Policy:
    """Like :func:`load_policy` for the content of a file (e.g. a dashboard upload)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"policy {source} is not UTF-8 text") from None
    default = load_policy()
    return _build(_parse(text, source), default, source)


def apply_policy(policy: Policy, candidate: Mapping[str, Any]) -> Verdicts:
    """Verdict of every enabled rule for one candidate, and the overall verdict.

    Parameters
    ----------
    policy : Policy
    candidate : mapping
        A candidate's ``to_dict()`` (keys ``fidelity``, ``privacy``, ``utility``, ``glucose``),
        live or read back from ``report.json``.

    Returns
    -------
    Verdicts
        ``overall`` is "fail" if any rule fails, else "warn" if any warns, else "pass" if any
        passes, else "n/a".
    """
    if not isinstance(candidate, Mapping):
        raise ConfigError(f"candidate must be a to_dict() mapping; got {type(candidate).__name__}")
    verdicts = []
    for rule in policy.rules.values():
        if not rule.enabled:
            continue
        value, reference, note = RULES[rule.name][2](candidate, rule)
        if math.isnan(value):
            verdict: Verdict = policy.missing
            errors = candidate.get("errors") or {}
            if errors:
                note = f"{note}; section errors: {', '.join(sorted(errors))}".lstrip("; ")
        elif rule.direction == "lower":
            verdict = (
                "pass" if value <= rule.pass_at else "fail" if value > rule.fail_at else "warn"
            )
        else:
            verdict = (
                "pass" if value >= rule.pass_at else "fail" if value < rule.fail_at else "warn"
            )
        verdicts.append(
            RuleVerdict(
                rule.name,
                verdict,
                None if math.isnan(value) else value,
                rule.pass_at,
                rule.fail_at,
                rule.direction,
                rule.description,
                None if math.isnan(reference) else reference,
                note,
            )
        )
    overall = max((v.verdict for v in verdicts), key=_SEVERITY.__getitem__, default="n/a")
    return Verdicts(overall=overall, rules=tuple(verdicts), policy=policy.name)


#: headline scores shown side by side with the holdout reference (Overview page, report.html)
HEADLINES: dict[str, str] = {
    "ip_alpha": "IPα",
    "ir_beta": "IRβ",
    "authenticity": "authenticity",
    "mia_auc": "MIA AUC (max)",
    "dcr_share": "DCR share",
    "discriminator_auc": "discriminator AUC",
    "k_marginal": "2-marginal",
    "tstr_trtr_ratio": "TSTR/TRTR",
}


def headline_scores(candidate: Mapping[str, Any]) -> dict[str, tuple[float | None, float | None]]:
    """Headline ``{key: (value, holdout reference)}`` of a candidate's ``to_dict()``.

    Values that were not measured are ``None``.
    """
    fidelity = section_of(candidate, "fidelity")
    reference = fidelity.get("holdout_reference") or {}
    k_rule = Rule("k_marginal", 0, 0, "higher", "", k=2)
    measured = {
        "ip_alpha": (as_number(fidelity.get("ip_alpha")), as_number(reference.get("ip_alpha"))),
        "ir_beta": (as_number(fidelity.get("ir_beta")), as_number(reference.get("ir_beta"))),
        "authenticity": (
            as_number(fidelity.get("authenticity")),
            as_number(reference.get("authenticity")),
        ),
        "mia_auc": measure_mia_auc(candidate, k_rule)[:2],
        "dcr_share": measure_dcr_share(candidate, k_rule)[:2],
        "discriminator_auc": measure_discriminator_auc(candidate, k_rule)[:2],
        "k_marginal": measure_k_marginal(candidate, k_rule)[:2],
        "tstr_trtr_ratio": measure_tstr_trtr_ratio(candidate, k_rule)[:2],
    }
    return {
        key: tuple(None if math.isnan(v) else v for v in pair)  # type: ignore[misc]
        for key, pair in measured.items()
    }
