"""Markup from transcripts is inert in the markdown and CSV reports, as in the HTML one
(issue 46, item 6): HTML tags, markdown links and images, table pipes and headings in
names and utterances are escaped in markdown; cells that a spreadsheet would run as a
formula are quoted in CSV."""

from __future__ import annotations

import csv
import io
import re
from importlib import resources
from pathlib import Path

import yaml
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.report.render import md_paragraph, md_text, rows_csv

PAYLOAD = "<img src=x onerror=alert(1)> [win](javascript:alert(2)) ![t](http://t/x.png) | # h"


def test_html_and_markdown_markup_in_text_is_escaped() -> None:
    shown = md_text(PAYLOAD + "\n# heading\n> quote")
    assert "<img" not in shown and "&lt;img" in shown
    assert not re.search(r"(?<!\\)\]\(", shown)  # no link or image can open
    assert "\n" not in shown and "\\|" in shown and "\\#" in shown


def test_an_utterance_of_several_lines_keeps_them_and_opens_no_block() -> None:
    proposal = "We propose 40 GBP.\n- deadline: 30 days\n---\n# terms\n2. interest <b>"
    lines = md_paragraph(proposal).split("  \n")  # hard line breaks: one paragraph
    assert lines == [
        "We propose 40 GBP.",
        "\\- deadline: 30 days",
        "\\---",
        "\\# terms",
        "2\\. interest &lt;b&gt;",
    ]


def test_a_markdown_report_of_a_run_with_markup_in_names_carries_none_of_it(
    tmp_path: Path,
) -> None:
    text = resources.files("disputelab.scenarios").joinpath("tenancy.yaml").read_text("utf-8")
    data = yaml.safe_load(text)
    data["title"] = PAYLOAD
    data["parties"][0]["name"] = "<script>alert(3)</script>"
    data["topics"][0]["options"][0]["label"] = "[pay](javascript:alert(4))"
    case = tmp_path / "case.yaml"
    case.write_text(yaml.safe_dump(data, allow_unicode=True))
    store = str(tmp_path / "runs")
    r = CliRunner().invoke(app, ["--store", store, "run", str(case), "--budget", "6"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "r.md"
    r = CliRunner().invoke(app, ["--store", store, "report", "last", "--out", str(out)])
    assert r.exit_code == 0, r.output
    report = out.read_text()
    assert "&lt;script&gt;" in report  # the name is there, as text
    assert "<script" not in report and "<img" not in report
    assert not re.search(r"(?<!\\)\]\(", report)  # no link or image opens


def test_csv_cells_a_spreadsheet_would_run_as_formulas_are_quoted() -> None:
    rows = [{"a": '=HYPERLINK("http://x","y")', "b": "+1", "c": "@SUM(A1)", "d": -2.5, "e": "ok"}]
    got = next(csv.DictReader(io.StringIO(rows_csv(rows))))
    assert got == {
        "a": '\'=HYPERLINK("http://x","y")',
        "b": "'+1",
        "c": "'@SUM(A1)",
        "d": "-2.5",
        "e": "ok",
    }
