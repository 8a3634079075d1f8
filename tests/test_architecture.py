"""The shape the project promises: layers import one way, lint is clean."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORT = re.compile(r"^\s*(?:import|from)\s+([\w.]+)", re.MULTILINE)


def _imports(path: Path) -> set[str]:
    return {m.split(".")[0] for m in IMPORT.findall(path.read_text())}


def test_engine_never_imports_streamlit():
    offenders = [p.name for p in (ROOT / "synthreview").rglob("*.py") if "streamlit" in _imports(p)]
    assert offenders == []


def test_pages_do_no_metric_math():
    heavy = {"scipy", "sklearn", "torch", "faiss"}
    offenders = {p.name: _imports(p) & heavy for p in (ROOT / "pages").glob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_metrics_and_figures_stay_in_their_layer():
    for path in (ROOT / "synthreview" / "metrics").glob("*.py"):
        assert "plotly" not in _imports(path), path.name
    for path in (ROOT / "synthreview" / "figures").glob("*.py"):
        assert "streamlit" not in _imports(path), path.name


def test_app_is_only_config_and_navigation():
    source = (ROOT / "app.py").read_text()
    calls = set(re.findall(r"st\.(\w+)\(", source))
    assert calls <= {"set_page_config", "navigation", "Page"}


def test_every_navigation_page_exists():
    pages = re.findall(r'st\.Page\("([^"]+)"', (ROOT / "app.py").read_text())
    assert pages and all((ROOT / p).is_file() for p in pages)
    assert sorted(pages) == sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py"))


def test_offline_config():
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    assert re.search(r"gatherUsageStats\s*=\s*false", config)
    assert re.search(r'address\s*=\s*"127\.0\.0\.1"', config)


def test_ruff_is_clean():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", str(ROOT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:]
