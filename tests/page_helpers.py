"""AppTest helpers shared by the page tests: open a page on a given review, or on no data."""

from __future__ import annotations

import copy
import dataclasses
import json
from dataclasses import replace
from pathlib import Path

from streamlit.testing.v1 import AppTest

from synthreview.record.session import DEMO_AUTOLOADED_KEY, REVIEW_KEY, STORED_KEYS
from synthreview.record.store import OPEN_ENV, OPEN_KEY_ENV

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def run_page(
    page: str, review, *, timeout: float = 180, run_review: bool = True, options=None
) -> AppTest:
    """Run the app with ``review`` loaded, press Run review (unless told not to), switch to
    ``page`` and run it: pages only read the stored results.

    ``options`` (a ``ReviewOptions``) replaces the session's starting options, as the pages'
    widgets would (e.g. a claimed ε, a person column, no embedding for a fast review).
    """
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state[REVIEW_KEY] = review
    at.session_state[DEMO_AUTOLOADED_KEY] = True
    if options is not None:
        at.session_state["_options"] = options  # app_state's options key
    at.run()
    if run_review:
        at.button(key="run_review").click().run()
        assert not at.exception, at.exception
    return at.switch_page(page).run()


def reviewed_session(review, *, timeout: float = 600) -> dict:
    """Load ``review``, press Run review once and return the session's stored review: the
    values of ``STORED_KEYS`` (the review, seed, options and every stored step and release).

    Page tests whose subject is a page, not the run, open pages on it with
    :func:`page_after_run` instead of reviewing the same data again (issue 33 item 8).
    """
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state[REVIEW_KEY] = review
    at.session_state[DEMO_AUTOLOADED_KEY] = True
    at.run()
    at.button(key="run_review").click().run()
    assert not at.exception, at.exception
    return {key: at.session_state[key] for key in STORED_KEYS if key in at.session_state}


def _own_copy(value):
    """``value`` with its own containers: a mutable dataclass (the live review, to which a page
    may add audit previews) gets fresh dicts, so no test sees another test's additions; the
    stored results inside are frozen and shared."""
    if isinstance(value, dict):
        return dict(value)
    if dataclasses.is_dataclass(value) and not value.__dataclass_params__.frozen:
        fresh = copy.copy(value)
        for field in dataclasses.fields(value):
            if isinstance(getattr(value, field.name), dict):
                setattr(fresh, field.name, dict(getattr(value, field.name)))
        return fresh
    return value


def page_after_run(page: str, stored: dict, *, timeout: float = 180) -> AppTest:
    """A fresh session holding ``stored`` (:func:`reviewed_session`), switched to ``page``: what
    :func:`run_page` shows after Run review, without computing the review again."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state[DEMO_AUTOLOADED_KEY] = True
    for key, value in stored.items():
        at.session_state[key] = _own_copy(value)
    at.run()
    assert not at.exception, at.exception
    return at.switch_page(page).run()


def run_page_without_data(page: str, *, timeout: float = 180) -> AppTest:
    """Run ``page`` with no review loaded (the demo auto-load already spent)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state[DEMO_AUTOLOADED_KEY] = True
    at.session_state[REVIEW_KEY] = None
    at.run()
    return at.switch_page(page).run()


def with_empty_candidate(review):
    """``review`` with its first candidate's table emptied (too few rows for any metric).

    Returns the broken review and that candidate's name: only that candidate should fail.
    """
    name = review.candidates[0]
    table = review.synthetic[name]
    empty = replace(table, frame=table.frame.iloc[:0], raw=table.raw.iloc[:0])
    return replace(review, synthetic={**review.synthetic, name: empty}), name


def chart_text(chart) -> str:
    """Every string in a plotly chart's figure, decoded from its JSON spec.

    plotly escapes non-ASCII characters (``α`` as ``\\u03b1``) unless ``orjson`` is installed, so a
    test must parse the JSON rather than search its text.
    """
    return "\n".join(spec_strings(json.loads(chart.proto.spec)))


def spec_strings(spec: object, *, skip: tuple[str, ...] = ()) -> list[str]:
    """Every string in a decoded plotly JSON spec, leaving out the values under ``skip`` keys
    (e.g. ``customdata``: data a page reads back from a selection, never drawn)."""
    strings: list[str] = []

    def walk(node: object, key: str | None = None) -> None:
        if key in skip:
            return
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, dict):
            for k, value in node.items():
                walk(value, k)
        elif isinstance(node, list):
            for value in node:
                walk(value, key)

    walk(spec)
    return strings


def opened_app(monkeypatch, folder, key=None) -> AppTest:
    """The app as ``synthreview show FOLDER [--key KEY]`` starts it (the record named in the
    environment, read once at session start), its first page drawn without an exception."""
    monkeypatch.setenv(OPEN_ENV, str(folder))
    if key is None:
        monkeypatch.delenv(OPEN_KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(OPEN_KEY_ENV, str(key))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at
