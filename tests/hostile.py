"""Hostile review files: Markdown, HTML and URLs in names, column names, subject ids and cells.

Shared by the page test (``test_page_hostile.py``, AppTest) and the real-browser test
(``test_browser_hostile.py``). Every URL points at ``127.0.0.1:<port>``, where the browser test
runs a server that records any request. Each construct carries a token (``ZQX…``) that is the
whole text of the element it would create when rendered (``**ZQXs**`` -> ``<strong>ZQXs``), so a
test finds a rendered construct by an element whose text is exactly a token.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from synthreview import demo

#: texts of the elements the constructs would create when rendered
TOKENS = ("ZQXs", "ZQXl", "ZQXi", "ZQXb", "ZQXa")


def hostile(port: int) -> dict[str, str]:
    """The constructs, keyed by kind; every URL names ``127.0.0.1:port``."""
    url = f"http://127.0.0.1:{port}"
    return {
        "bold": "**ZQXs**",
        "link": f"[ZQXl]({url}/x)",
        "image": f"![ZQXi]({url}/i.png)",
        "html": f"<b>ZQXb</b><a href='{url}/y'>ZQXa</a>",
        "img": f"<img src={url}/z>",
        "url": f"{url}/w",
        "template": "%{y}",
    }


def candidate_names(port: int, *, slashes: bool = True) -> tuple[str, str]:
    """Two candidate names. A browser upload keeps only the part after the last ``/`` of a
    file name, so ``slashes=False`` gives names with the constructs that need no ``/`` (tags
    are opened twice instead of closed: ``<b>ZQXb<b>`` still draws ``ZQXb`` bold)."""
    h = hostile(port)
    if not slashes:
        return f"{h['bold']} <b>ZQXb<b> {h['template']}", "[ZQXl] <i>ZQXi<i> _u_"
    return f"{h['bold']} {h['image']} {h['template']}", f"{h['html']} {h['url']} {h['img']}"


#: Adult columns renamed to a construct (column names reach labels, axes and captions)
_RENAMED = {
    "workclass": "link",
    "occupation": "img",
    "age": "url",
    "education": "bold",
    "relationship": "html",
    "race": "image",
}
#: the categorical column whose cells become constructs (one per level)
HOSTILE_CELLS = "marital_status"


def hostile_tables(port: int, *, n_rows: int = 200) -> dict[str, pd.DataFrame]:
    """Real, holdout and two candidates (``copula``, ``noisy_copy``) of the Adult demo as text
    frames, with hostile column names and cells."""
    h = hostile(port)
    review = demo.tables(seed=1, n_train=n_rows, n_holdout=n_rows)
    frames = {
        "real": review.real.raw,
        "holdout": review.holdout.raw,
        "copula": review.synthetic["copula"].raw,
        "noisy_copy": review.synthetic["noisy_copy"].raw,
    }
    kinds = list(h)
    levels = sorted(set().union(*(set(f[HOSTILE_CELLS].dropna()) for f in frames.values())))
    cells = {level: f"{h[kinds[k % len(kinds)]]} {k}" for k, level in enumerate(levels)}
    columns = {column: h[kind] for column, kind in _RENAMED.items()}
    return {
        name: frame.assign(**{HOSTILE_CELLS: frame[HOSTILE_CELLS].map(cells)}).rename(
            columns=columns
        )
        for name, frame in frames.items()
    }


def write_tables(folder: Path, port: int, *, n_rows: int = 200) -> dict[str, Path]:
    """:func:`hostile_tables` as CSV files named ``real.csv``, ``holdout.csv``, ``copula.csv``
    and ``noisy_copy.csv`` in ``folder``."""
    paths = {}
    for name, frame in hostile_tables(port, n_rows=n_rows).items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def hostile_subjects(port: int) -> list[str]:
    """Subject ids: one construct each, numbered so they stay distinct."""
    return [f"{text} {k}" for k, text in enumerate(hostile(port).values())]


def trace_frames(port: int, *, n_real: int = 36, n_holdout: int = 18) -> dict[str, pd.DataFrame]:
    """Long-format CGM files (``id,time,glucose``) for real, holdout and one candidate that
    copies the real days (so the per-person privacy table lists memorised subjects).

    Day traces of the bundled recording are dealt to hostile subject ids: real days to the
    first four ids, holdout days to the others (subjects are members or non-members, never
    both). Each day gets its own date.
    """
    review = demo.traces(seed=0)
    real = review.traces["real"].values[:n_real]
    holdout = review.traces["holdout"].values[:n_holdout]
    ids = hostile_subjects(port)
    n_steps = real.shape[1]
    start = pd.Timestamp("2020-01-01")

    def long(values: np.ndarray, subjects: list[str], first_day: int) -> pd.DataFrame:
        rows = []
        for i, day in enumerate(values):
            times = start + pd.Timedelta(days=first_day + i) + pd.to_timedelta(
                np.arange(n_steps) * 5, unit="min"
            )  # fmt: skip
            rows.append(
                pd.DataFrame(
                    {"id": subjects[i % len(subjects)], "time": times, "glucose": day.round(1)}
                )
            )
        return pd.concat(rows, ignore_index=True)

    real_frame = long(real, ids[:4], 0)
    return {
        "real": real_frame,
        "holdout": long(holdout, ids[4:], 1000),
        "copy": real_frame.copy(),
    }


def write_traces(folder: Path, port: int) -> dict[str, Path]:
    """:func:`trace_frames` as ``real.csv``, ``holdout.csv``, ``copy.csv`` in ``folder``."""
    paths = {}
    for name, frame in trace_frames(port).items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False, date_format="%Y-%m-%d %H:%M:%S")
    return paths


#: Markdown and HTML that would render: an unescaped link or image opener, an HTML tag, a
#: bare URL or www. host (GFM autolinks), emphasis around a token
_LIVE_MARKDOWN = re.compile(
    r"(?<!\\)!?\[[^\]]*(?<!\\)\]\(|(?<!\\)<(?:a|b|i|img)\b|https?://|www\.|(?<!\\)\*\*ZQX|(?<!\\)_u_",
    re.IGNORECASE,
)
#: plotly markup from the data: a link or image tag, a bold or italic token, the template
#: variable a name carries (the builders' own templates never follow ``)`` or ``>``)
_LIVE_PLOT = re.compile(r"<img\b|<a\b|<[bi]>ZQX|[)>] %\{y\}", re.IGNORECASE)


def live_markdown(source: str) -> list[str]:
    """Constructs in the Markdown ``source`` that Streamlit would render as markup."""
    return [m.group(0) for m in _LIVE_MARKDOWN.finditer(source)]


def live_plot_text(text: str) -> list[str]:
    """Markup from the hostile data in one string of a plotly figure."""
    return [m.group(0) for m in _LIVE_PLOT.finditer(text)]
