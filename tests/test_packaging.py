"""`pip install .` gives the same libraries as the pinned requirements (issue 23, item 6).

Every package the engine or the dashboard imports is a dependency of the project (or of its
``app`` / ``dask`` / ``postgres`` extras), and every pin in ``requirements.txt`` lies inside
the project's range for it, so an install from either file gives a working ``synthreview``.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict[str, Requirement]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = [Requirement(r) for r in meta["dependencies"]]
    for extra in meta["optional-dependencies"].values():
        found += [Requirement(r) for r in extra]
    return {canonicalize_name(r.name): r for r in found}


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            requirement = Requirement(line)
            (spec,) = requirement.specifier
            assert spec.operator == "==", line  # the app's requirements are exact pins
            pins[canonicalize_name(requirement.name)] = spec.version
    return pins


def test_every_pin_satisfies_the_project_range():
    project, pins = _project(), _pins()
    missing = sorted(set(pins) - set(project))
    assert missing == [], f"pinned in requirements.txt but not in pyproject.toml: {missing}"
    for name, version in pins.items():
        assert project[name].specifier.contains(version, prereleases=True), (name, version)


def test_every_imported_library_is_a_dependency():
    imports = set()
    for path in [*(ROOT / "synthreview").rglob("*.py"), ROOT / "app_state.py", ROOT / "app.py",
                 *(ROOT / "pages").glob("*.py")]:  # fmt: skip
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imports |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imports.add(node.module.split(".")[0])
    module_to_package = {"sklearn": "scikit-learn", "faiss": "faiss-cpu", "jinja2": "jinja2",
                         "markupsafe": "markupsafe", "yaml": "pyyaml"}  # fmt: skip
    project = _project()
    third_party = {
        canonicalize_name(module_to_package.get(m, m))
        for m in imports
        if m not in {"synthreview", "app_state", "__future__"} and not _stdlib(m)
    }
    # dask's distributed scheduler ships as the 'distributed' module of dask[distributed]
    third_party -= {"distributed"}
    assert sorted(third_party - set(project)) == []


def _stdlib(module: str) -> bool:
    import sys

    return module in sys.stdlib_module_names


def test_the_synthreview_command_is_the_cli(capsys):
    """``pip install .`` puts a ``synthreview`` command on the path: it runs ``cli.main``, the
    function ``python -m synthreview`` runs, and the extras the README names all exist."""
    import importlib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    module, _, function = meta["scripts"]["synthreview"].partition(":")
    main = getattr(importlib.import_module(module), function)
    assert f"from {module} import {function}" in (ROOT / "synthreview" / "__main__.py").read_text()
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("usage: synthreview ")
    readme = (ROOT / "README.md").read_text()
    for extra in ("app", "dask", "postgres"):
        assert extra in meta["optional-dependencies"]
        assert f".[{extra}]" in readme
