"""Build the demo data bundled in ``synthreview/datasets/`` from the shared source files.

Run once by a developer, never by the product: the package reads only the compressed copies
this script writes. The output is byte-reproducible (gzip header without a timestamp or file
name), so re-running it on the same sources leaves ``git status`` clean.

Usage::

    python scripts/make_datasets.py [--source ../shared/data] [--out synthreview/datasets]

Sources (see ``synthreview/datasets/README.md`` for the attributions):

- ``adult.csv`` -> ``adult.csv.gz``: copied byte for byte.
- ``cgm_bokeh_1_subject.csv`` -> ``cgm_one_subject.csv.gz``: columns ``datetime`` and
  ``glucose`` kept as written; the sensor current ``isig`` is dropped because nothing in the
  review reads it and it would make the file a third larger.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO.parent / "shared" / "data"
DEFAULT_OUT = REPO / "synthreview" / "datasets"
CGM_COLUMNS = ("datetime", "glucose")


def gzip_bytes(data: bytes) -> bytes:
    """Compress ``data`` reproducibly: no file name and a zero timestamp in the gzip header."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
        gz.write(data)
    return buffer.getvalue()


def cgm_columns(text: str, columns: tuple[str, ...] = CGM_COLUMNS) -> str:
    """Keep ``columns`` of a CSV text, values untouched (no float round trip)."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in columns if c not in (reader.fieldnames or [])]
    if missing:
        raise SystemExit(f"CGM source is missing columns {missing}; found {reader.fieldnames}")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in reader:
        writer.writerow([row[c] for c in columns])
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    """Write ``adult.csv.gz`` and ``cgm_one_subject.csv.gz`` to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    adult = (args.source / "adult.csv").read_bytes()
    (args.out / "adult.csv.gz").write_bytes(gzip_bytes(adult))

    cgm = (args.source / "cgm_bokeh_1_subject.csv").read_text(encoding="utf-8")
    (args.out / "cgm_one_subject.csv.gz").write_bytes(gzip_bytes(cgm_columns(cgm).encode()))

    for path in sorted(args.out.glob("*.gz")):
        print(f"{path.relative_to(REPO)}: {path.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
