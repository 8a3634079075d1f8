"""Folders of Parquet partitions uploaded in Chromium (1280x720), as a reviewer picks them.

The reviewer ticks "Each table is a folder of Parquet partitions", picks the training folder,
then two candidate folders one after the other (the widget adds each pick), and loads them:
the Data page names the two candidates after their folders. (That an uploaded folder reads as
the folder on disk, digest included, is tested without a browser in test_parquet_folders.py
and test_page_data.py.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

from tests.conftest import ARTIFACTS
from tests.e2e_utils import click_keyed, open_page, wait_for_app_run

pytestmark = pytest.mark.e2e


def _partitioned(frame: pd.DataFrame, folder: Path, parts: int) -> Path:
    folder.mkdir(parents=True)
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), parts)):
        frame.iloc[rows].to_parquet(folder / f"part.{i}.parquet", index=False)
    (folder / "_SUCCESS").write_bytes(b"")  # a writer's marker: skipped
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("folders")
    rng = np.random.default_rng(3)

    def rows(n: int) -> pd.DataFrame:
        return pd.DataFrame({
            "age": rng.integers(18, 80, n),
            "hours": rng.normal(40, 8, n).round(1),
            "group": rng.choice(["a", "b", "c"], n),
        })  # fmt: skip

    return {
        "train": _partitioned(rows(200), root / "train", 3),
        "ctgan": _partitioned(rows(120), root / "ctgan", 2),
        "copula": _partitioned(rows(120), root / "copula", 2),
    }


def _pick(page, key: str, folder: Path) -> None:
    page.locator(f".st-key-{key}").get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        str(folder)
    )
    wait_for_app_run(page)


def test_folders_are_picked_and_loaded_as_tables(meeting, folders):
    page = meeting
    open_page(page, "Data")
    page.get_by_text("Upload tables (CSV, TSV, Parquet)").click()
    wait_for_app_run(page)
    page.locator(".st-key-folder_uploads").get_by_text("Each table is a folder").click()
    wait_for_app_run(page)
    _pick(page, "real_folder", folders["train"])
    _pick(page, "synthetic_folders", folders["ctgan"])
    _pick(page, "synthetic_folders", folders["copula"])
    # the three pickers name what they hold: the folders' files listed under each
    for key, names in (
        ("real_folder", ["part.0.parquet"]),
        ("synthetic_folders", ["copula", "ctgan"]),
    ):
        for name in names:
            expect(page.locator(f".st-key-{key}").get_by_text(name).first).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "data_folders_1280x720.png"))
    click_keyed(page, "load_files")
    loaded = "Review loaded: table, 2 synthetic candidate(s): ctgan, copula"
    expect(page.get_by_text(loaded)).to_be_visible()
    expect(page.get_by_role("heading", name="What was loaded")).to_be_visible()
