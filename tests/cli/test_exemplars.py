"""`disputelab exemplars` and `disputelab run --protocol bilateral` offline: select a set,
save it by name, reuse it in a run; bad input fails in one line with exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm import embedding


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return result.exit_code, result.output


SMALL = ("--k", "3", "--candidates", "6", "--rollouts", "3", "--budget", "8")


def test_a_selected_set_is_saved_listed_shown_and_used_by_name_in_a_run(tmp_path: Path) -> None:
    code, out = _cli(tmp_path, "exemplars", "select", "--name", "mine", *SMALL)
    assert code == 0, out
    assert "saved set mine" in out and (tmp_path / "runs" / "exemplars" / "mine.json").is_file()
    code, out = _cli(tmp_path, "exemplars", "list", "--format", "csv")
    assert code == 0 and 'mine,set,3,"value-impact, value impact +' in out
    code, out = _cli(tmp_path, "exemplars", "show", "mine")
    assert code == 0 and "fixed:" in out and "said:" in out
    code, out = _cli(
        tmp_path,
        "run",
        "salary",
        "--protocol",
        "bilateral",
        "--mediator",
        "remediator",
        "--exemplars",
        "mine",
        "--violation-prob",
        "1.0",
        "--seed",
        "4",
    )
    assert code == 0, out
    assert "heard as" in out and "reward" in out


def test_compare_says_which_vectors_retrieval_ranked_the_pool_by(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _cli(tmp_path, "exemplars", "select", "--name", "mine", *SMALL)[0] == 0
    few = ("--tasks", "2", "--replicates", "1")
    code, out = _cli(tmp_path, "exemplars", "compare", "mine", *few, "--lexical")
    assert code == 0, out
    assert "retrieval ICL ranked the pool by lexical vectors (--lexical)" in _flat(out)
    # Without the sentence model, retrieval falls back to lexical vectors: said, and why.
    monkeypatch.setattr(embedding, "embedding_available", lambda: "sentence_transformers gone")
    code, out = _cli(tmp_path, "exemplars", "compare", "mine", *few)
    assert code == 0, out
    assert "ranked the pool by lexical vectors: sentence_transformers gone" in _flat(out)
    # The reason is printed as written, brackets and all (an install hint names an extra).
    monkeypatch.setattr(embedding, "embedding_available", lambda: "pip install 'x[embed]'")
    code, out = _cli(tmp_path, "exemplars", "compare", "mine", *few)
    assert code == 0 and "pip install 'x[embed]'" in _flat(out), out


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_pool_can_be_generated_and_named(tmp_path: Path) -> None:
    code, out = _cli(tmp_path, "exemplars", "pool", "--name", "p", "--size", "12")
    assert code == 0, out
    assert "12 candidates" in out
    code, out = _cli(tmp_path, "exemplars", "show", "p")
    assert code == 0 and out.count("fixed:") == 12
    # Each exemplar's category (and style) in brackets, shown as text, not read as markup.
    ids = [line for line in out.splitlines() if line and not line.startswith(" ")][1:]
    assert len(ids) == 12 and all(line.rstrip().endswith("]") for line in ids), out


def test_an_unknown_set_fails_in_one_line(tmp_path: Path) -> None:
    code, out = _cli(
        tmp_path,
        "run",
        "product-sale",
        "--protocol",
        "bilateral",
        "--mediator",
        "remediator",
        "--exemplars",
        "nosuchset",
    )
    assert code == 2
    assert "no exemplars named 'nosuchset'" in out and "Traceback" not in out


def test_a_topic_protocol_refuses_a_price_scenario_in_one_line(tmp_path: Path) -> None:
    code, out = _cli(tmp_path, "run", "product-sale")
    assert code == 2 and "has none (only numeric terms)" in out and "Traceback" not in out


def test_bad_names_fail_in_one_line(tmp_path: Path) -> None:
    code, out = _cli(tmp_path, "exemplars", "select", "--name", "../x", *SMALL)
    assert code == 2 and "name" in out
    code, out = _cli(tmp_path, "exemplars", "show", "missing")
    assert code == 2 and "no exemplars named" in out


def test_a_saved_name_is_replaced_only_with_overwrite(tmp_path: Path) -> None:
    saved = tmp_path / "runs" / "exemplars" / "p.json"
    assert _cli(tmp_path, "exemplars", "pool", "--name", "p", "--size", "4")[0] == 0
    before = saved.read_text("utf-8")
    code, out = _cli(tmp_path, "exemplars", "pool", "--name", "p", "--size", "5", "--seed", "1")
    assert code == 2 and "exemplars 'p' are saved already" in out and "--overwrite" in out
    assert len(out.strip().splitlines()) == 1 and saved.read_text("utf-8") == before
    # select into the pool's own name would replace the pool it reads: refused the same way
    code, out = _cli(tmp_path, "exemplars", "select", "--name", "p", "--pool", "p", *SMALL)
    assert code == 2 and "saved already" in out and saved.read_text("utf-8") == before
    code, out = _cli(tmp_path, "exemplars", "pool", "--name", "p", "--size", "5", "--overwrite")
    assert code == 0, out
    assert "5 candidates" in out and saved.read_text("utf-8") != before
