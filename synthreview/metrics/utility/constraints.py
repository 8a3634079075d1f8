"""Declared constraints: rules the data owner says every row obeys, and how often each breaks.

Owners know rules their data obey: ranges, an order between columns, allowed combinations of
categories, unique keys, formulas (SDV's constraints; SDMetrics' constraint validity). The
reviewer writes them in a TOML file (``--constraints FILE.toml``)::

    [[range]]                      # min and/or max, inclusive
    column = "age"
    min = 17
    max = 90

    [[inequality]]                 # one comparison: <, <=, >, >= (and == / != allowed)
    expression = "capital_loss <= capital_gain + 5000"

    [[formula]]                    # an equality, within an absolute tolerance
    expression = "total == part_a + part_b"
    tolerance = 0.01

    [[allowed]]                    # the only combinations the columns may take
    columns = ["relationship", "sex"]
    combinations = [["Husband", "Male"], ["Wife", "Female"], ["Own-child", "Male"]]

    [[unique]]                     # a key: no two rows share it
    columns = ["id"]

Every entry may carry ``name = "..."``. Expressions are parsed with :mod:`ast` and only
column names (Python identifiers), numbers, ``+ - * /``, unary minus and brackets are
accepted (never ``eval``). A row whose operands are missing is not judged by that constraint;
a row of an ``[[allowed]]`` constraint with a missing value is not judged either; every row
that shares a ``[[unique]]`` key with another row violates it.

The violation rate of each constraint is measured on the candidate, on the training table and
on the holdout: declared rules that real data break too are not the generator's fault.
"""

from __future__ import annotations

import ast
import math
import operator
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synthreview.errors import ConfigError
from synthreview.results import to_jsonable

__all__ = [
    "Constraint",
    "ConstraintCheck",
    "ConstraintReport",
    "check_constraints",
    "parse_constraints",
]

KINDS = ("range", "inequality", "formula", "allowed", "unique")
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_COMPARE: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}


@dataclass(frozen=True)
class Constraint:
    """One parsed constraint.

    Attributes
    ----------
    kind : {"range", "inequality", "formula", "allowed", "unique"}
    name : str
        The entry's ``name``, else ``"<kind> #<n>"``.
    description : str
        The constraint in words (``"age in [17, 90]"``, the expression, ...).
    columns : tuple of str
        Columns it reads.
    spec : tuple
        What :func:`check_constraints` needs (bounds, the parsed expression, the combinations).
    """

    kind: str
    name: str
    description: str
    columns: tuple[str, ...]
    spec: tuple


def _fail(where: str, expected: str, got: object) -> ConfigError:
    return ConfigError(f"option constraints, {where}: expected {expected}; got {got!r} instead")


def _column(name: object, where: str, columns: Sequence[str]) -> str:
    if not isinstance(name, str) or name not in columns:
        raise _fail(where, f"an analysed column among {list(columns)}", name)
    return name


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(where, "a finite number", value)
    return float(value)


def _expression(node: ast.AST, where: str, columns: Sequence[str], used: list[str]) -> ast.AST:
    """Check that ``node`` is arithmetic over columns and numbers (raises otherwise)."""
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        _expression(node.left, where, columns, used)
        _expression(node.right, where, columns, used)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        _expression(node.operand, where, columns, used)
    elif (
        isinstance(node, ast.Constant)
        and not isinstance(node.value, bool)
        and isinstance(node.value, (int, float))
    ):
        pass
    elif isinstance(node, ast.Name):
        used.append(_column(node.id, where, columns))
    else:
        raise _fail(
            where,
            "column names, numbers, + - * / and brackets only",
            ast.unparse(node) if hasattr(ast, "unparse") else type(node).__name__,
        )
    return node


def _comparison(
    text: object, where: str, columns: Sequence[str], allowed_ops: Sequence[str]
) -> tuple[ast.Compare, tuple[str, ...]]:
    if not isinstance(text, str) or not text.strip():
        raise _fail(where, "an expression such as 'a <= b + 1'", text)
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise _fail(where, "an expression over column names (Python identifiers)", text) from None
    if not isinstance(tree, ast.Compare) or len(tree.ops) != 1:
        raise _fail(where, f"one comparison ({', '.join(allowed_ops)})", text)
    symbol = _COMPARE.get(type(tree.ops[0]), ("?", None))[0]
    if symbol not in allowed_ops:
        raise _fail(where, f"one comparison ({', '.join(allowed_ops)})", text)
    used: list[str] = []
    _expression(tree.left, where, columns, used)
    _expression(tree.comparators[0], where, columns, used)
    if not used:
        raise _fail(where, "an expression that reads at least one column", text)
    return tree, tuple(dict.fromkeys(used))


def _entry(kind: str, i: int, entry: object, columns: Sequence[str], numeric: Sequence[str]):
    where = f"[[{kind}]] #{i}"
    if not isinstance(entry, Mapping):
        raise _fail(where, "a table of keys", entry)
    name = entry.get("name", f"{kind} #{i}")
    if not isinstance(name, str):
        raise _fail(f"{where} name", "text", name)
    known = {
        "range": {"name", "column", "min", "max"},
        "inequality": {"name", "expression"},
        "formula": {"name", "expression", "tolerance"},
        "allowed": {"name", "columns", "combinations"},
        "unique": {"name", "columns"},
    }[kind]
    extra = sorted(set(entry) - known)
    if extra:
        raise _fail(where, f"only the keys {sorted(known)}", extra)
    if kind == "range":
        column = _column(entry.get("column"), f"{where} column", numeric)
        if "min" not in entry and "max" not in entry:
            raise _fail(where, "min and/or max", dict(entry))
        low = _number(entry["min"], f"{where} min") if "min" in entry else -math.inf
        high = _number(entry["max"], f"{where} max") if "max" in entry else math.inf
        if low > high:
            raise _fail(where, "min <= max", (low, high))
        text = f"{column} in [{low:g}, {high:g}]"
        return Constraint(kind, name, text, (column,), (low, high))
    if kind in ("inequality", "formula"):
        ops = ("==",) if kind == "formula" else ("<", "<=", ">", ">=", "==", "!=")
        tree, used = _comparison(entry.get("expression"), f"{where} expression", numeric, ops)
        tolerance = 0.0
        if kind == "formula":
            tolerance = _number(entry.get("tolerance", 0.0), f"{where} tolerance")
            if tolerance < 0:
                raise _fail(f"{where} tolerance", "a number >= 0", tolerance)
        text = str(entry["expression"]).strip()
        if tolerance:
            text += f" (within {tolerance:g})"
        return Constraint(kind, name, text, used, (tree, tolerance))
    cols = entry.get("columns")
    if not isinstance(cols, list) or not cols:
        raise _fail(f"{where} columns", "a non-empty list of column names", cols)
    cols_t = tuple(_column(c, f"{where} columns", columns) for c in cols)
    if len(set(cols_t)) != len(cols_t):
        raise _fail(f"{where} columns", "each column once", cols)
    if kind == "unique":
        return Constraint(kind, name, f"({', '.join(cols_t)}) is a unique key", cols_t, ())
    combos = entry.get("combinations")
    if not isinstance(combos, list) or not combos:
        raise _fail(f"{where} combinations", "a non-empty list of value lists", combos)
    allowed = set()
    for combo in combos:
        if not isinstance(combo, list) or len(combo) != len(cols_t):
            raise _fail(f"{where} combinations", f"lists of {len(cols_t)} values", combo)
        allowed.add(tuple(str(v) for v in combo))
    text = f"({', '.join(cols_t)}) takes one of {len(allowed)} allowed combinations"
    return Constraint(kind, name, text, cols_t, (frozenset(allowed),))


def parse_constraints(
    text: str, *, columns: Sequence[str], numeric: Sequence[str]
) -> tuple[Constraint, ...]:
    """Parse a constraints TOML text (module text) against the review's columns.

    Parameters
    ----------
    text : str
        The file's text.
    columns : sequence of str
        Analysed columns (``[[allowed]]`` and ``[[unique]]`` may name any).
    numeric : sequence of str
        Numeric columns (``[[range]]`` and expressions may name only these).

    Raises
    ------
    ConfigError
        ``"option constraints, [[kind]] #n ...: expected ...; got ... instead"``.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"option constraints must be valid TOML; got an error: {exc}") from None
    unknown = sorted(set(doc) - set(KINDS))
    if unknown:
        raise _fail("top level", f"arrays of tables among {list(KINDS)}", unknown)
    found = []
    for kind in KINDS:
        entries = doc.get(kind, [])
        if not isinstance(entries, list):
            raise _fail(kind, f"[[{kind}]] tables", entries)
        found += [_entry(kind, i, e, columns, numeric) for i, e in enumerate(entries, 1)]
    if not found:
        raise _fail("the file", f"at least one of {['[[' + k + ']]' for k in KINDS]}", doc)
    names = [c.name for c in found]
    if len(set(names)) != len(names):
        raise _fail("names", "each constraint named once", names)
    return tuple(found)


def _evaluate(node: ast.AST, frame: pd.DataFrame) -> Any:
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_evaluate(node.left, frame), _evaluate(node.right, frame))
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, frame)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Constant):
        return float(node.value)
    return pd.to_numeric(frame[node.id], errors="coerce").to_numpy(dtype=float)  # ast.Name


def violations(constraint: Constraint, frame: pd.DataFrame) -> tuple[int, int]:
    """``(rows violating, rows judged)`` of one constraint on one table."""
    kind, cols = constraint.kind, list(constraint.columns)
    if kind == "range":
        low, high = constraint.spec
        x = pd.to_numeric(frame[cols[0]], errors="coerce").to_numpy(dtype=float)
        judged = ~np.isnan(x)
        return int(((x < low) | (x > high))[judged].sum()), int(judged.sum())
    if kind in ("inequality", "formula"):
        tree, tolerance = constraint.spec
        with np.errstate(all="ignore"):
            left = np.broadcast_to(_evaluate(tree.left, frame), len(frame)).astype(float)
            right = np.broadcast_to(_evaluate(tree.comparators[0], frame), len(frame))
            right = right.astype(float)
            judged = np.isfinite(left) & np.isfinite(right)
            if kind == "formula":
                ok = np.abs(left - right) <= tolerance + 1e-9 * np.maximum(1, np.abs(right))
            else:
                ok = _COMPARE[type(tree.ops[0])][1](left, right)
        return int((~ok & judged).sum()), int(judged.sum())
    if kind == "unique":
        key = frame[cols].astype("string").fillna("\x00missing")
        return int(key.duplicated(keep=False).sum()), len(frame)
    (allowed,) = constraint.spec
    values = frame[cols]
    judged = values.notna().all(axis=1).to_numpy()
    rows = values.astype("string").to_numpy().tolist()
    bad = np.array([tuple(r) not in allowed for r in rows], dtype=bool)
    return int((bad & judged).sum()), int(judged.sum())


@dataclass(frozen=True)
class ConstraintCheck:
    """One constraint's violations in the candidate, the training table and the holdout.

    Attributes
    ----------
    name, kind, description : str
    violations, rows : int
        Candidate rows that break it, of those it judges.
    rate, real_rate, holdout_rate : float
        Violation shares (NaN when no row is judged; ``holdout_rate`` NaN without a holdout).
    """

    name: str
    kind: str
    description: str
    violations: int
    rows: int
    rate: float
    real_rate: float
    holdout_rate: float

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return to_jsonable(self.__dict__)


@dataclass(frozen=True)
class ConstraintReport:
    """Every declared constraint's check, in file order."""

    checks: tuple[ConstraintCheck, ...]

    def to_dict(self) -> dict:
        """JSON-ready: ``{"checks": [...]}``."""
        return to_jsonable({"checks": [c.to_dict() for c in self.checks]})


def _rate(bad: int, judged: int) -> float:
    return bad / judged if judged else math.nan


def check_constraints(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    holdout: pd.DataFrame | None = None,
    constraints: Sequence[Constraint],
) -> ConstraintReport:
    """Violation rate of each constraint on the candidate beside the real tables'.

    Parameters
    ----------
    real, synthetic : pandas.DataFrame
    holdout : pandas.DataFrame, optional
    constraints : sequence of Constraint
        From :func:`parse_constraints`.

    Returns
    -------
    ConstraintReport
        Rates in [0, 1], lower is better; the real tables' rates say whether real data obey
        the declared rule at all.
    """
    checks = []
    for c in constraints:
        bad, judged = violations(c, synthetic)
        real_rate = _rate(*violations(c, real))
        holdout_rate = math.nan if holdout is None else _rate(*violations(c, holdout))
        checks.append(
            ConstraintCheck(
                c.name,
                c.kind,
                c.description,
                bad,
                judged,
                _rate(bad, judged),
                real_rate,
                holdout_rate,
            )
        )
    return ConstraintReport(tuple(checks))
