"""Release policy: which rules a release requires, and their pass / warn / fail thresholds.

A policy turns the numbers of a review into the verdicts a release meeting needs. Every rule
reads one value from a candidate's ``to_dict()`` (the same JSON as in ``report.json``, see
:mod:`synthreview.judgement.rules`), so a verdict can be recomputed from a filed report without
re-running any metric. The shipped defaults live in ``synthreview/policies/default.toml``, where
each threshold is justified; a reviewer's file only needs the rules it changes.

Fail closed: a rule the policy marks ``required`` that could not be computed (its section
failed, an option it needs was not given, the data were degenerate) is ``incomplete``, and an
incomplete candidate is never released. ``n/a`` is only for a rule that does not apply to the
kind of data under review (``applies_to``). A rule that is not required is advisory: it can
warn but never fail a candidate.

The same file holds the traffic lights of the dashboard's summary tables (``[lights.NAME]``):
how far a candidate may fall behind the holdout reference before a cell turns yellow or red.
They decide nothing, but they live here so that no figure or page holds a threshold of its own.

Binding: every rule judges a registered metric (``RuleSpec.metric``) whose registry entry names
the rule back (``MetricInfo.rules``), and every light colours a registered metric; a policy is
refused at load when either side is missing (:func:`check_bindings`). The three audit rules
read the release audit's evidence (``candidate["audit"]``), registered as metrics that bind no
function.
"""

from __future__ import annotations

import hashlib
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from synthreview.errors import ConfigError
from synthreview.judgement.context import ACCESS_MODELS, STRICTEST
from synthreview.judgement.rules import SPECS, Measurement, RuleSpec, number
from synthreview.judgement.verdicts import SEVERITY, Verdict
from synthreview.metrics.info import MetricInfo
from synthreview.metrics.registry import REGISTRY
from synthreview.metrics.registry import get as metric_info
from synthreview.metrics.utility.efficacy import CLASSIFICATION_METRICS, REGRESSION_METRICS
from synthreview.results import to_jsonable

KINDS: tuple[str, ...] = ("table", "traces")
#: what [policy].missing may say an unmeasured advisory rule counts as
MISSING_CHOICES: tuple[str, ...] = ("n/a", "warn", "fail")
_RULE_KEYS = ("pass", "fail", "enabled", "required", "applies_to", "k")
_LIGHT_KEYS = ("pass", "fail", "relative", "reason")
#: ML-efficacy scores a ``[lights.tstr_SCORE]`` colours (TSTR against TRTR), with their ideal
TSTR_IDEALS: dict[str, float] = {
    **{score: 1.0 for score in CLASSIFICATION_METRICS},
    **{score: 0.0 if score == "rmse" else 1.0 for score in REGRESSION_METRICS},
}
#: a light named ``<metric>_by_group`` colours that metric computed within groups
BY_GROUP = "_by_group"


@dataclass(frozen=True)
class Light:
    """A summary-table traffic light: how far a candidate may fall behind the holdout reference.

    The judged quantity is the *excess*: how much farther the candidate's value is from the
    metric's ideal than the holdout reference is (``|value - ideal| - |reference - ideal|``),
    so a candidate as good as a fresh real sample has excess 0 and a better one a negative
    excess. At most ``pass_at`` is green, above ``fail_at`` red, in between yellow.

    Attributes
    ----------
    name : str
        ``[lights.NAME]``: a registered metric (``"k_marginal"``), the same metric within groups
        (``"proportion_error_by_group"``) or an ML-efficacy score (``"tstr_roc_auc"``, TSTR
        against TRTR).
    metric : str
        The registry metric it colours.
    pass_at, fail_at : float
        On the metric's own scale; with ``relative`` as shares of ``|reference|``.
    relative : bool
    reason : str
        Why these numbers (from the policy file).
    ideal : float
        The value of a perfect candidate (the registry's, or the ML score's).
    """

    name: str
    metric: str
    pass_at: float
    fail_at: float
    relative: bool
    reason: str
    ideal: float

    def verdict(self, value: float, reference: float) -> Verdict:
        """``"pass"``, ``"warn"``, ``"fail"``, or ``"n/a"`` when a number is missing."""
        value, reference = number(value), number(reference)
        if math.isnan(value) or math.isnan(reference):
            return "n/a"
        excess = abs(value - self.ideal) - abs(reference - self.ideal)
        scale = abs(reference) if self.relative else 1.0
        if excess <= self.pass_at * scale:
            return "pass"
        return "fail" if excess > self.fail_at * scale else "warn"

    def describe(self) -> str:
        """``"10 (red beyond 30)"`` or ``"5 % of the reference (red beyond 15 %)"``."""
        if self.relative:
            return (
                f"{100 * self.pass_at:g} % of the reference (red beyond {100 * self.fail_at:g} %)"
            )
        return f"{self.pass_at:g} (red beyond {self.fail_at:g})"


def light_metric(name: str) -> tuple[str, float] | None:
    """The registry metric and ideal a ``[lights.NAME]`` colours; None for an unknown name."""
    if name.startswith("tstr_") and name.removeprefix("tstr_") in TSTR_IDEALS:
        return "tstr_trtr_ratio", TSTR_IDEALS[name.removeprefix("tstr_")]
    base = name.removesuffix(BY_GROUP)
    if base in REGISTRY:
        return base, REGISTRY[base].ideal
    return None


def check_bindings(
    specs: Mapping[str, RuleSpec] = SPECS, registry: Mapping[str, MetricInfo] = REGISTRY
) -> None:
    """Refuse rules and metrics that do not name each other.

    Every rule must judge a registered metric whose ``rules`` name it, and every rule a metric
    names must exist; an audit rule's metric must read the audit (its ``key`` starts with
    ``audit.``) and bind no function.

    Raises
    ------
    ConfigError
        Naming the rule or metric and what is missing.
    """
    for name, spec in specs.items():
        info = registry.get(spec.metric)
        if info is None:
            raise ConfigError(
                f"rule {name!r} must judge a registered metric; got {spec.metric!r} instead"
            )
        if name not in info.rules:
            raise ConfigError(
                f"metric {spec.metric!r} must name the rule {name!r} that judges it in its "
                f"catalog entry (rules=); got {info.rules!r} instead"
            )
        if spec.stage == "audit" and not (info.key.startswith("audit.") and info.function is None):
            raise ConfigError(
                f"audit rule {name!r} must read the release audit's evidence (a metric keyed "
                f"'audit.*' without a function); got {info.key!r} instead"
            )
    for info in registry.values():
        unknown = sorted(set(info.rules) - set(specs))
        if unknown:
            raise ConfigError(
                f"metric {info.name!r} names rules {unknown} that no policy can configure; "
                f"expected names among {sorted(specs)}"
            )


@dataclass(frozen=True)
class Rule:
    """One policy rule.

    Attributes
    ----------
    name : str
    pass_at, fail_at : float
        Thresholds on the judged quantity (see :mod:`synthreview.judgement.rules`): at least
        as good as ``pass_at`` passes, worse than ``fail_at`` fails, in between warns.
    direction : {"lower", "higher"}
        Which way the *thresholds* are better (from the rule's form and the registry metric).
    description : str
    enabled : bool
    required : bool
        A release needs this rule measured and not failed; False makes it advisory (at worst
        "warn").
    applies_to : tuple of {"table", "traces"}
        Kinds of data the rule applies to; elsewhere it is "n/a".
    k : int or None
        Marginal order (k_marginal only).
    """

    name: str
    pass_at: float
    fail_at: float
    direction: Literal["lower", "higher"]
    description: str
    enabled: bool = True
    required: bool = True
    applies_to: tuple[str, ...] = KINDS
    k: int | None = None

    @property
    def spec(self) -> RuleSpec:
        """How the rule measures and explains its value."""
        return SPECS[self.name]


@dataclass(frozen=True)
class LedgerLimits:
    """A policy's ``[ledger]``: the most releases per source and composed claimed ε (None: no
    cap; :mod:`synthreview.judgement.ledger` applies them)."""

    max_releases: int | None = None
    max_epsilon: float | None = None

    def to_dict(self) -> dict[str, object]:
        """``report.json`` ``policy.ledger``."""
        return {
            "max_releases": self.max_releases,
            "max_epsilon": self.max_epsilon,
            "composition": "basic (sum of claimed ε)",
        }


@dataclass(frozen=True)
class Policy:
    """Rules by name, in the order they are reported, plus how unmeasured advisory rules count.

    ``sha256`` is the digest of the policy file's bytes as loaded (the shipped
    ``policies/default.toml`` for the default policy, the reviewer's file otherwise), so a filed
    report names exactly which file judged it.
    """

    name: str
    rules: Mapping[str, Rule]
    missing: str = "n/a"
    source: str = "default"
    sha256: str = ""
    lights: Mapping[str, Light] = field(default_factory=dict)
    #: ``[access.NAME.rules.RULE]``: per access model, the rules whose thresholds it overrides
    access_rules: Mapping[str, Mapping[str, Rule]] = field(default_factory=dict)
    #: the access model these rules are set for (None: not chosen yet, see :meth:`for_access`)
    access: str | None = None
    #: why this access model: from the release context, or the strictest for want of one
    access_reason: str = ""
    #: ``[ledger]``: caps per source (synthreview.judgement.ledger)
    ledger: LedgerLimits = field(default_factory=LedgerLimits)

    def for_access(self, access: str | None) -> Policy:
        """The policy with ``[access.ACCESS]``'s thresholds in place of the base ones.

        ``access`` is the release context's access model; None (a review without a context)
        picks :data:`synthreview.judgement.context.STRICTEST`, the widest audience, whose
        thresholds the policy sets strictest: a review never passes for want of a context
        (fail closed). An access model the policy sets nothing for keeps the base thresholds.
        """
        if access is not None and access not in ACCESS_MODELS:
            raise ConfigError(
                f"access must be one of {list(ACCESS_MODELS)}; got {access!r} instead"
            )
        if access is None:
            chosen = STRICTEST
            reason = (
                f"no release context: judged under the strictest thresholds, "
                f"[access.{STRICTEST}] (fail closed)"
            )
        else:
            chosen = access
            reason = f"the release context's access model: [access.{access}]"
        overrides = self.access_rules.get(chosen, {})
        if not overrides:
            reason += "; the policy sets no thresholds of its own for it (base thresholds)"
        # only the thresholds move: enabled, required and applies_to stay this policy's
        rules = {
            name: replace(rule, pass_at=overrides[name].pass_at, fail_at=overrides[name].fail_at)
            if name in overrides
            else rule
            for name, rule in self.rules.items()
        }
        return replace(self, rules=rules, access=chosen, access_reason=reason)

    @property
    def required(self) -> list[str]:
        """Names of the enabled rules a release requires."""
        return [r.name for r in self.rules.values() if r.enabled and r.required]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready policy (for report.json and the manifest)."""
        return to_jsonable(
            {
                "name": self.name,
                "source": self.source,
                "sha256": self.sha256,
                "missing": self.missing,
                "rules": {
                    r.name: {
                        "pass": r.pass_at,
                        "fail": r.fail_at,
                        "direction": r.direction,
                        "enabled": r.enabled,
                        "required": r.required,
                        "applies_to": list(r.applies_to),
                        "metric": r.spec.metric,
                        **({"k": r.k} if r.k is not None else {}),
                    }
                    for r in self.rules.values()
                },
                "lights": {
                    light.name: {
                        "pass": light.pass_at,
                        "fail": light.fail_at,
                        "relative": light.relative,
                        "metric": light.metric,
                    }
                    for light in self.lights.values()
                },
                "access": self.access,
                "access_reason": self.access_reason,
                "ledger": self.ledger.to_dict(),
                "access_rules": {
                    model: {r.name: {"pass": r.pass_at, "fail": r.fail_at} for r in rules.values()}
                    for model, rules in self.access_rules.items()
                },
            }
        )

    def light(self, name: str) -> Light | None:
        """The light ``[lights.name]``, or None where the policy sets none."""
        return self.lights.get(name)

    def rules_for(self, metric: str) -> list[Rule]:
        """The enabled rules judging registry ``metric`` (through the registry's binding)."""
        found = (self.rules.get(r) for r in metric_info(metric).rules)
        return [rule for rule in found if rule is not None and rule.enabled]


@dataclass(frozen=True)
class RuleVerdict:
    """The verdict of one rule for one candidate, with the evidence and a plain reason.

    ``value`` is the judged quantity the thresholds apply to (e.g. the IPα shortfall),
    ``measured`` the metric itself (the point estimate a page shows) and ``reference`` its
    holdout reference. A rule that judges a confidence bound instead of the point keeps it in
    ``bound`` (the metric's units) with ``bound_text``, the bound in words with its number
    ("the 95 % lower bound 0.573 over 13 attacks (Bonferroni)"), and ``point``: the judged
    quantity the point estimate alone would give, so a screen can say why a point beyond the
    line still passes. :func:`synthreview.figures.explain.rule_reading` renders all of it.
    """

    rule: str
    verdict: Verdict
    value: float | None
    pass_at: float
    fail_at: float
    direction: str
    description: str
    reference: float | None = None
    note: str = ""
    measured: float | None = None
    required: bool = True
    reason: str = ""
    bound: float | None = None
    bound_text: str = ""
    point: float | None = None

    @property
    def message(self) -> str:
        """One line for logs and the CLI: rule, plain reason, verdict and thresholds."""
        if self.value is None:
            return f"{self.rule} {self.verdict}: {self.reason}"
        better = "≤" if self.direction == "lower" else "≥"
        worse = "above" if self.direction == "lower" else "below"
        return (
            f"{self.rule} = {self.value:.4g} → {self.verdict}: {self.reason} "
            f"(pass {better} {self.pass_at:g}, fail {worse} {self.fail_at:g})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready verdict."""
        return to_jsonable(
            {
                "rule": self.rule,
                "verdict": self.verdict,
                "value": self.value,
                "measured": self.measured,
                "pass": self.pass_at,
                "fail": self.fail_at,
                "direction": self.direction,
                "reference": self.reference,
                "required": self.required,
                "description": self.description,
                "reason": self.reason,
                "note": self.note,
                "bound": self.bound,
                "bound_text": self.bound_text,
                "point": self.point,
            }
        )


@dataclass(frozen=True)
class Verdicts:
    """Every rule's verdict for one candidate and the overall verdict.

    ``overall`` is "fail" if a rule fails, else "incomplete" if a required rule could not be
    computed, else "warn" if a rule warns, else "pass" if a rule passes, else "n/a".
    """

    overall: Verdict
    rules: tuple[RuleVerdict, ...] = field(default_factory=tuple)
    policy: str = "default"
    kind: str = "table"

    @property
    def failed(self) -> list[RuleVerdict]:
        """Rules that failed, in policy order."""
        return [r for r in self.rules if r.verdict == "fail"]

    @property
    def incomplete(self) -> list[RuleVerdict]:
        """Required rules that could not be computed, in policy order."""
        return [r for r in self.rules if r.verdict == "incomplete"]

    @property
    def warned(self) -> list[RuleVerdict]:
        """Rules that warn, in policy order."""
        return [r for r in self.rules if r.verdict == "warn"]

    def __getitem__(self, rule: str) -> RuleVerdict:
        for r in self.rules:
            if r.rule == rule:
                return r
        raise KeyError(rule)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"overall", "policy", "kind", "rules": {name: verdict}}``."""
        return {
            "overall": self.overall,
            "policy": self.policy,
            "kind": self.kind,
            "rules": {r.rule: r.to_dict() for r in self.rules},
        }


# --- loading --------------------------------------------------------------------------------


def _default_bytes() -> bytes:
    return resources.files("synthreview").joinpath("policies/default.toml").read_bytes()


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"policy {source} is not UTF-8 text") from None


def _parse(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"policy file {source} is not valid TOML: {exc}") from None


def _threshold(table: Mapping[str, Any], key: str, where: str) -> float:
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{where}.{key} must be a finite number; got {value!r} instead")
    return float(value)


def _flag(table: Mapping[str, Any], key: str, old: bool, where: str) -> bool:
    value = table.get(key, old)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key} must be true or false; got {value!r} instead")
    return value


def _kinds(table: Mapping[str, Any], old: tuple[str, ...], where: str) -> tuple[str, ...]:
    value = table.get("applies_to", list(old))
    if (
        not isinstance(value, list)
        or not value
        or any(not isinstance(v, str) or v not in KINDS for v in value)
    ):
        raise ConfigError(
            f"{where}.applies_to must be a non-empty list drawn from {list(KINDS)}; "
            f"got {value!r} instead"
        )
    return tuple(k for k in KINDS if k in value)


def _rule(name: str, table: Mapping[str, Any], old: Rule | None, where: str) -> Rule:
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table; got {table!r} instead")
    extra = sorted(set(table) - set(_RULE_KEYS))
    if extra:
        raise ConfigError(f"{where} has unknown keys {extra}; expected {', '.join(_RULE_KEYS)}")
    if old is None and not {"pass", "fail"} <= set(table):
        raise ConfigError(f"{where} must set both 'pass' and 'fail'")
    spec = SPECS[name]
    direction = "higher" if spec.higher_is_better else "lower"
    pass_at = _threshold(table, "pass", where) if "pass" in table else old.pass_at
    fail_at = _threshold(table, "fail", where) if "fail" in table else old.fail_at
    if (direction == "lower" and pass_at > fail_at) or (
        direction == "higher" and pass_at < fail_at
    ):
        raise ConfigError(
            f"{where}: {direction} is better for this rule, so 'pass' ({pass_at:g}) must not be "
            f"{'above' if direction == 'lower' else 'below'} 'fail' ({fail_at:g})"
        )
    k = table.get("k", old.k if old else None)
    if name == "k_marginal" and (isinstance(k, bool) or k not in (1, 2, 3)):
        raise ConfigError(f"{where}.k must be 1, 2 or 3; got {k!r} instead")
    if name != "k_marginal" and "k" in table:
        raise ConfigError(f"{where}.k only applies to k_marginal")
    return Rule(
        name=name,
        pass_at=pass_at,
        fail_at=fail_at,
        direction=direction,
        description=spec.description,
        enabled=_flag(table, "enabled", old.enabled if old else True, where),
        required=_flag(table, "required", old.required if old else True, where),
        applies_to=_kinds(table, old.applies_to if old else KINDS, where),
        k=k if name == "k_marginal" else None,
    )


def _light(name: str, table: Mapping[str, Any], old: Light | None, where: str) -> Light:
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table; got {table!r} instead")
    found = light_metric(name)
    if found is None:
        raise ConfigError(
            f"{where} names no registered metric; expected a metric of the registry, "
            f"METRIC{BY_GROUP}, or tstr_SCORE with SCORE one of {sorted(TSTR_IDEALS)}"
        )
    extra = sorted(set(table) - set(_LIGHT_KEYS))
    if extra:
        raise ConfigError(f"{where} has unknown keys {extra}; expected {', '.join(_LIGHT_KEYS)}")
    if old is None and not {"pass", "fail", "reason"} <= set(table):
        raise ConfigError(f"{where} must set 'pass', 'fail' and 'reason'")
    pass_at = _threshold(table, "pass", where) if "pass" in table else old.pass_at
    fail_at = _threshold(table, "fail", where) if "fail" in table else old.fail_at
    if not 0 <= pass_at <= fail_at:
        raise ConfigError(
            f"{where}: 'pass' ({pass_at:g}) and 'fail' ({fail_at:g}) are how far behind the "
            "holdout reference a candidate may be, so 0 <= pass <= fail"
        )
    reason = table.get("reason", old.reason if old else "")
    if not isinstance(reason, str) or not reason.strip():
        raise ConfigError(f"{where}.reason must be a non-empty string; got {reason!r} instead")
    metric, ideal = found
    return Light(
        name=name,
        metric=metric,
        pass_at=pass_at,
        fail_at=fail_at,
        relative=_flag(table, "relative", old.relative if old else False, where),
        reason=reason.strip(),
        ideal=ideal,
    )


def _build(doc: Mapping[str, Any], base: Policy | None, source: str, sha256: str) -> Policy:
    check_bindings()
    unknown = sorted(set(doc) - {"policy", "rules", "lights", "access", "ledger"})
    if unknown:
        raise ConfigError(
            f"policy {source} has unknown tables {unknown}; expected [policy], [rules.*], "
            "[lights.*], [access.*], [ledger]"
        )
    head = doc.get("policy", {})
    extra = sorted(set(head) - {"name", "missing"})
    if extra:
        raise ConfigError(
            f"policy {source}: [policy] has unknown keys {extra}; expected name, missing"
        )
    missing = head.get("missing", base.missing if base else "n/a")
    if missing not in MISSING_CHOICES:
        raise ConfigError(
            f"policy {source}: [policy].missing must be one of {list(MISSING_CHOICES)}; "
            f"got {missing!r} instead"
        )
    tables = doc.get("rules", {})
    if not isinstance(tables, Mapping):
        raise ConfigError(f"policy {source}: 'rules' must be a table of [rules.NAME] tables")
    rules = dict(base.rules) if base else {}
    for name, table in tables.items():
        where = f"policy {source}: [rules.{name}]"
        if name not in SPECS:
            raise ConfigError(f"{where} is not a known rule; expected one of {sorted(SPECS)}")
        rules[name] = _rule(name, table, rules.get(name), where)
    ordered = {name: rules[name] for name in SPECS if name in rules}
    light_tables = doc.get("lights", {})
    if not isinstance(light_tables, Mapping):
        raise ConfigError(f"policy {source}: 'lights' must be a table of [lights.NAME] tables")
    lights = dict(base.lights) if base else {}
    for name, table in light_tables.items():
        lights[name] = _light(name, table, lights.get(name), f"policy {source}: [lights.{name}]")
    return Policy(
        name=str(head.get("name", source)),
        rules=ordered,
        missing=missing,
        source=source,
        sha256=sha256,
        lights=lights,
        access_rules=_access_rules(doc.get("access", {}), ordered, base, source, tables),
        ledger=_ledger(doc.get("ledger"), base.ledger if base else LedgerLimits(), source),
    )


def _ledger(table: object, old: LedgerLimits, source: str) -> LedgerLimits:
    """``[ledger]``: ``max_releases`` (a positive integer) and ``max_epsilon`` (a positive
    number); a key left out keeps the base policy's."""
    if table is None:
        return old
    where = f"policy {source}: [ledger]"
    if not isinstance(table, Mapping) or set(table) - {"max_releases", "max_epsilon"}:
        raise ConfigError(f"{where} may set only max_releases and max_epsilon; got {table!r}")
    releases = table.get("max_releases", old.max_releases)
    if releases is not None and (
        isinstance(releases, bool) or not isinstance(releases, int) or releases < 1
    ):
        raise ConfigError(
            f"{where}.max_releases must be a positive integer; got {releases!r} instead"
        )
    epsilon = table.get("max_epsilon", old.max_epsilon)
    if epsilon is not None and (
        isinstance(epsilon, bool)
        or not isinstance(epsilon, int | float)
        or not math.isfinite(epsilon)
        or epsilon <= 0
    ):
        raise ConfigError(f"{where}.max_epsilon must be a positive number; got {epsilon!r} instead")
    return LedgerLimits(releases, None if epsilon is None else float(epsilon))


def _access_rules(
    tables: object,
    rules: Mapping[str, Rule],
    base: Policy | None,
    source: str,
    own: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Rule]]:
    """``[access.MODEL.rules.RULE]`` tables: thresholds that replace the base rule's for MODEL.

    A file that sets a model's tables replaces the base policy's for that model; a model it
    leaves out keeps the base policy's, except for a rule whose ``pass`` or ``fail`` the file
    sets in ``[rules.RULE]``: the file's thresholds then hold for every access model it gives
    none of its own (the shipped policy's access thresholds never silently replace a reviewer's).
    """
    if not isinstance(tables, Mapping):
        raise ConfigError(f"policy {source}: 'access' must be a table of [access.MODEL] tables")
    changed = {
        name
        for name, table in (own or {}).items()
        if isinstance(table, Mapping) and {"pass", "fail"} & set(table)
    }
    chosen: dict[str, dict[str, Rule]] = {
        model: {name: rule for name, rule in overrides.items() if name not in changed}
        for model, overrides in (base.access_rules if base else {}).items()
    }
    for model, table in tables.items():
        where = f"policy {source}: [access.{model}]"
        if model not in ACCESS_MODELS:
            raise ConfigError(f"{where} is not an access model; expected one of {ACCESS_MODELS}")
        if not isinstance(table, Mapping) or set(table) - {"rules"}:
            raise ConfigError(f"{where} must hold only [access.{model}.rules.RULE] tables")
        chosen[model] = {}
        for name, entry in (table.get("rules") or {}).items():
            if name not in rules:
                raise ConfigError(
                    f"{where}.rules.{name} is not a rule of this policy; expected one of "
                    f"{sorted(rules)}"
                )
            if not isinstance(entry, Mapping) or set(entry) - {"pass", "fail"}:
                raise ConfigError(
                    f"{where}.rules.{name} may set only 'pass' and 'fail'; got {entry!r}"
                )
            chosen[model][name] = _rule(name, entry, rules[name], f"{where}.rules.{name}")
    return chosen


def load_policy(path: str | Path | None = None) -> Policy:
    """Read a policy TOML; rules it does not mention keep the shipped defaults.

    Parameters
    ----------
    path : str or Path, optional
        Policy file. ``None`` returns the shipped ``policies/default.toml``.

    Returns
    -------
    Policy
        With ``sha256`` the digest of the bytes read (of ``path``, or of the shipped file).

    Raises
    ------
    ConfigError
        Unreadable file, invalid TOML, unknown rule or key, or thresholds in the wrong order.
    """
    data = _default_bytes()
    default = _build(
        _parse(_decode(data, "default.toml"), "default.toml"),
        None,
        "default.toml",
        hashlib.sha256(data).hexdigest(),
    )
    if path is None:
        return default
    path = Path(path)
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"policy file {path} cannot be read: {exc}") from None
    return _build(_parse(text, str(path)), default, path.name, hashlib.sha256(data).hexdigest())


def parse_policy(text: str | bytes, *, source: str = "uploaded policy") -> Policy:
    """Like :func:`load_policy` for the content of a file (e.g. a dashboard upload)."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    decoded = _decode(data, source)
    return _build(_parse(decoded, source), load_policy(), source, hashlib.sha256(data).hexdigest())


# --- applying ---------------------------------------------------------------------------------


def candidate_kind(candidate: Mapping[str, Any]) -> str:
    """ "traces" when the candidate carries (or failed) the glucose section, else "table"."""
    errors = candidate.get("errors") or {}
    return "traces" if "glucose" in candidate or "glucose" in errors else "table"


def _judge(rule: Rule, judged: float) -> Verdict:
    if rule.direction == "lower":
        return "pass" if judged <= rule.pass_at else "fail" if judged > rule.fail_at else "warn"
    return "pass" if judged >= rule.pass_at else "fail" if judged < rule.fail_at else "warn"


def judge_rule(rule: Rule, candidate: Mapping[str, Any], *, kind: str, missing: str) -> RuleVerdict:
    """The verdict of one rule for one candidate's ``to_dict()``."""
    spec = rule.spec
    if kind not in rule.applies_to:
        m = Measurement(math.nan, detail=f"does not apply to {kind} data", applicable=False)
    else:
        m = spec.measure(candidate, rule.k or 2)
    judged = spec.judged(m)
    bounded = not math.isnan(m.bound) and not math.isnan(judged)
    point = spec.judged(replace(m, bound=math.nan)) if bounded else judged
    note = m.detail
    if not m.applicable:
        verdict: Verdict = "n/a"
        reason = f"not applicable: {m.detail}"
    elif math.isnan(judged):
        if rule.required:
            verdict = "fail" if missing == "fail" else "incomplete"
            reason = f"required but not computed: {m.detail}"
        else:
            verdict = missing  # type: ignore[assignment]
            reason = f"not computed (advisory rule): {m.detail}"
    else:
        verdict = _judge(rule, judged)
        reason = spec.say(m)
        if verdict == "fail" and not rule.required:
            verdict = "warn"
            note = f"{note}; beyond the fail mark, but the policy does not require this rule"
            note = note.lstrip("; ")
    return RuleVerdict(
        rule=rule.name,
        verdict=verdict,
        value=None if math.isnan(judged) else judged,
        pass_at=rule.pass_at,
        fail_at=rule.fail_at,
        direction=rule.direction,
        description=rule.description,
        reference=None if math.isnan(m.reference) else m.reference,
        note=note,
        measured=None if math.isnan(m.value) else m.value,
        required=rule.required,
        reason=reason,
        bound=m.bound if bounded else None,
        bound_text=m.bound_text if bounded else "",
        point=None if math.isnan(point) else point,
    )


def verdict_for_value(
    policy: Policy, rule: str, value: float, *, reference: float = math.nan
) -> Verdict:
    """Verdict of one of ``policy``'s rules for a single measured metric value.

    For figures and tables that colour a value outside a whole candidate (one attack's row):
    the value goes through the rule's form (e.g. TPR at 1 % FPR in multiples of chance) and the
    policy's thresholds, so a figure never holds thresholds of its own.

    Parameters
    ----------
    policy : Policy
    rule : str
        Rule name (``[rules.NAME]``).
    value : float
        The metric value (as the rule's ``measure`` would read it).
    reference : float, optional
        Holdout reference of the metric (``shortfall`` rules).

    Returns
    -------
    {"pass", "warn", "fail", "n/a"}
        ``"n/a"`` for a disabled or unknown rule or a non-finite value; an advisory rule's
        "fail" reads "warn", as in :func:`judge_rule`.
    """
    found = policy.rules.get(rule)
    if found is None or not found.enabled:
        return "n/a"
    judged = found.spec.judged(Measurement(number(value), reference=number(reference)))
    if math.isnan(judged):
        return "n/a"
    verdict = _judge(found, judged)
    return "warn" if verdict == "fail" and not found.required else verdict


def metric_verdict(
    policy: Policy, metric: str, value: float, *, reference: float = math.nan
) -> Verdict:
    """Verdict of one value of registry ``metric`` under the policy rule that judges it.

    The rule is found through the registry's binding (``MetricInfo.rules``, first enabled one),
    so a table colouring a metric (the Overview's key numbers) reads the policy's thresholds
    without naming a rule or holding a number. ``"n/a"`` where no enabled rule judges the
    metric; otherwise as :func:`verdict_for_value`.
    """
    rules = policy.rules_for(metric)
    if not rules:
        return "n/a"
    return verdict_for_value(policy, rules[0].name, value, reference=reference)


def apply_policy(
    policy: Policy, candidate: Mapping[str, Any], *, kind: str | None = None
) -> Verdicts:
    """Verdict of every enabled rule for one candidate, and the overall verdict.

    Parameters
    ----------
    policy : Policy
    candidate : mapping
        A candidate's ``to_dict()`` (keys ``fidelity``, ``privacy``, ``utility``, ``glucose``,
        ``errors``), live or read back from ``report.json``; with an ``"audit"`` entry
        (:func:`synthreview.release.verdicts.audit_evidence`) the audit rules are judged too.
    kind : {"table", "traces"}, optional
        The review's kind (``Report.kind``); inferred from the candidate when not given.

    Returns
    -------
    Verdicts
        ``overall`` is "fail" if any rule fails, else "incomplete" if a required rule could
        not be computed, else "warn", "pass" or (nothing applied) "n/a".
    """
    if not isinstance(candidate, Mapping):
        raise ConfigError(
            f"candidate must be a to_dict() mapping; got {type(candidate).__name__} instead"
        )
    kind = kind or candidate_kind(candidate)
    if kind not in KINDS:
        raise ConfigError(f"kind must be one of {list(KINDS)}; got {kind!r} instead")
    # the audit rules are judged where the audit ran (its evidence under "audit"); a review
    # judged before its audit leaves them out instead of calling them missing
    audited = isinstance(candidate.get("audit"), Mapping)
    verdicts = tuple(
        judge_rule(rule, candidate, kind=kind, missing=policy.missing)
        for rule in policy.rules.values()
        if rule.enabled and (audited or rule.spec.stage != "audit")
    )
    overall = max((v.verdict for v in verdicts), key=SEVERITY.__getitem__, default="n/a")
    return Verdicts(overall=overall, rules=verdicts, policy=policy.name, kind=kind)


def judge_candidates(
    policy: Policy, candidates: Mapping[str, Mapping[str, Any]], *, kind: str | None = None
) -> dict[str, Verdicts]:
    """:func:`apply_policy` for every candidate of a ``report.to_dict()["candidates"]``."""
    return {name: apply_policy(policy, c, kind=kind) for name, c in candidates.items()}


#: headline metrics shown side by side with the holdout reference (Overview page, report.html):
#: headline key -> the rule that judges it (its verdict gives the judged value beside the point)
HEADLINE_RULES: dict[str, str] = {
    "ip_alpha": "ip_alpha",
    "ir_beta": "ir_beta",
    "authenticity": "authenticity_gap",
    "mia_auc": "mia_auc",
    "mia_tpr_at_fpr_1pct": "mia_tpr_at_fpr_1pct",
    "dcr_share": "dcr_share",
    "discriminator_auc": "discriminator_auc",
    "k_marginal": "k_marginal",
    "tstr_trtr_ratio": "tstr_trtr_ratio",
}
#: headline key -> display label (from the metric registry)
HEADLINES: dict[str, str] = {
    key: metric_info(SPECS[rule].metric).label for key, rule in HEADLINE_RULES.items()
}
HEADLINES["k_marginal"] = "2-marginal"


def headline_scores(
    candidate: Mapping[str, Any], *, k: int = 2
) -> dict[str, tuple[float | None, float | None]]:
    """Headline ``{key: (metric value, holdout reference)}`` of a candidate's ``to_dict()``.

    Values that were not measured are ``None``.
    """
    out = {}
    for key, rule in HEADLINE_RULES.items():
        m = SPECS[rule].measure(candidate, k)
        out[key] = tuple(None if math.isnan(v) else v for v in (m.value, m.reference))
    return out  # type: ignore[return-value]


def threshold_text(policy: Policy, metric: str) -> str:
    """The policy's thresholds on registry ``metric``, in one line for a tooltip.

    ``"Release rule: IPα shortfall vs the holdout reference passes at most 0.1, fails above
    0.2 (required)."``; empty when no enabled rule of ``policy`` judges the metric.
    """
    parts = []
    for rule in policy.rules_for(metric):
        higher = rule.direction == "higher"
        better, worse = ("at least", "below") if higher else ("at most", "above")
        kind = "required" if rule.required else "advisory: warns only"
        parts.append(
            f"{rule.description} passes {better} {rule.pass_at:g}, fails {worse} "
            f"{rule.fail_at:g} ({kind})"
        )
    return f"Release rule: {'; '.join(parts)}." if parts else ""


def required_sections(policy: Policy, kind: str) -> list[str]:
    """Sections the required rules of ``policy`` read, for data of ``kind`` (in SECTIONS order)."""
    if kind == "traces":
        needed = any(kind in r.applies_to for r in policy.rules.values() if r.enabled)
        return ["glucose"] if needed else []
    sections = {
        metric_info(r.spec.metric).section
        for r in policy.rules.values()
        if r.enabled and r.required and kind in r.applies_to
    }
    return [s for s in ("fidelity", "privacy", "utility", "glucose") if s in sections]
