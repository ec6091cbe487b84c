"""bench/plan_tracker/doc_budget.py counts every line of the README and the quickstart into a valid result file."""

from __future__ import annotations

import json
from pathlib import Path

from bench.plan_tracker.doc_budget import DOCS, lines_of, main

ROOT = Path(__file__).resolve().parents[3]


def test_every_line_counts_blank_ones_too(tmp_path: Path) -> None:
    doc = tmp_path / "d.md"
    doc.write_text("# T\n\n\ntext\n", encoding="utf-8")
    assert lines_of(doc) == 4
    doc.write_text("no newline at the end", encoding="utf-8")
    assert lines_of(doc) == 1


def test_the_result_file_holds_each_docs_count(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path)]) == 0
    (written,) = tmp_path.glob("*-tracker_doc_budget-*.json")
    doc = json.loads(written.read_text(encoding="utf-8"))
    got = {c["params"]["doc"]: c["samples"] for c in doc["cases"] if c["metric"] == "tracker.doc_lines"}
    assert got == {d: [float(lines_of(ROOT / d))] for d in DOCS}
    assert set(doc["provenance"]["fingerprint"]["files"]) >= set(DOCS)
