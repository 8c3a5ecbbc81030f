"""`disputelab exemplars import --from sadas`: a pool from the remediator paper's released
data (files of its shapes, ours: `tests/sadas_files.py`), its labels inferred from the
text and counted, and value-impact selection on it that is not identically zero."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from disputelab.api import exemplars
from disputelab.cli import app
from tests.sadas_files import EXEMPLARS, EXPECTED, exemplar_file, pair_file


def _cli(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return result.exit_code, " ".join(result.stdout.split()), " ".join(result.stderr.split())


def _saved(tmp_path: Path, name: str) -> dict[str, object]:
    data = json.loads((tmp_path / "runs" / "exemplars" / f"{name}.json").read_text())
    assert isinstance(data, dict)
    return data


def test_the_exemplar_list_becomes_a_pool_with_inferred_labels_counted(tmp_path: Path) -> None:
    code, out, err = _cli(
        tmp_path, "exemplars", "import", "--from", "sadas", str(exemplar_file(tmp_path))
    )
    assert code == 0, err
    assert "saved pool sadas: 6 exemplars from 6 records" in out
    assert (
        "inferred category: (none) 1, culture 1, dishonest 1, dismissive 1, insulting 1, "
        "self-serving 1" in out
    )
    assert "inferred style: apologise 2, alternatives 1, concede 1, empathise 1, restate 1" in out
    pool = _saved(tmp_path, "sadas")
    items = pool["exemplars"]
    assert isinstance(items, list)
    for number, item in enumerate(items, start=1):
        assert (item["category"], item["style"]) == EXPECTED[number]
        assert item["inferred"] is True and item["label_source"].startswith("inferred by rule")
        assert item["origin"] == f"all_icl_example.json record {number}"
        assert item["scenario_id"] == "sadas-product-80-50"
    first = items[0]
    assert first["violation"] == EXEMPLARS[0]["last_sentence"]
    assert first["history"][0].startswith("buyer: ")
    code, out, _ = _cli(tmp_path, "exemplars", "show", "sadas")
    assert code == 0
    assert "sadas-00001 [dismissive, alternatives]" in out
    assert "sadas-00006 [no category, apologise]" in out
    assert "labels inferred by rule lexicon/1: category from the violation (words" in out


def test_a_record_that_cannot_be_read_fails_naming_it_and_saves_nothing(tmp_path: Path) -> None:
    bad = exemplar_file(tmp_path, [*EXEMPLARS[:2], {"conversation": "buyer: 你好"}, "x"])
    code, out, err = _cli(tmp_path, "exemplars", "import", "--from", "sadas", str(bad))
    assert code == 2
    assert err.startswith("error: ")
    assert "record 3: 'last_sentence' is missing (1 more records cannot be read)" in err
    assert "pass --lenient to skip such records" in err
    assert not (tmp_path / "runs" / "exemplars" / "sadas.json").exists()
    assert "Traceback" not in out + err


def test_lenient_skips_them_warned_and_listed_in_the_pool(tmp_path: Path) -> None:
    bad = exemplar_file(tmp_path, [*EXEMPLARS[:2], {"conversation": "buyer: 你好"}, "x"])
    code, out, err = _cli(tmp_path, "exemplars", "import", "--from", "sadas", str(bad), "--lenient")
    assert code == 0, err
    assert "record 3: cannot be read ('last_sentence' is missing); skipped" in err
    assert "record 4: cannot be read (not a JSON object); skipped" in err
    assert "2 exemplars from 4 records" in out
    meta = _saved(tmp_path, "sadas")["meta"]
    assert isinstance(meta, dict) and meta["skipped_records"] == [3, 4]


def test_what_a_record_read_past_is_warned_and_noted_on_its_exemplar(tmp_path: Path) -> None:
    odd = dict(EXEMPLARS[0], conversation=EXEMPLARS[0]["conversation"].replace("【violation】", ""))
    code, _, err = _cli(
        tmp_path, "exemplars", "import", "--from", "sadas", str(exemplar_file(tmp_path, [odd]))
    )
    assert code == 0, err
    assert "record 1: no 【violation】 mark" in err
    items = _saved(tmp_path, "sadas")["exemplars"]
    assert isinstance(items, list) and len(items) == 1
    assert items[0]["notes"] == [
        "no 【violation】 mark; the dialogue's last line taken as the violation"
    ]


def test_the_rewrite_pairs_import_too_with_repeats_merged(tmp_path: Path) -> None:
    code, out, err = _cli(
        tmp_path,
        "exemplars",
        "import",
        "--from",
        "sadas",
        str(pair_file(tmp_path)),
        "--name",
        "pairs",
    )
    assert code == 0, err
    assert "saved pool pairs: 2 exemplars from 3 records" in out
    assert "1 record(s) repeat an earlier one word for word" in err
    house = _saved(tmp_path, "pairs")["exemplars"][1]  # type: ignore[index]
    assert house["origin"] == "train_bargaining.csv records 2, 3"
    assert (house["category"], house["style"]) == ("insulting", "concede")


def test_an_existing_pool_is_kept_unless_overwritten(tmp_path: Path) -> None:
    args = ("exemplars", "import", "--from", "sadas", str(exemplar_file(tmp_path)))
    assert _cli(tmp_path, *args)[0] == 0
    code, _, err = _cli(tmp_path, *args)
    assert code == 2 and "pass --overwrite" in err
    assert _cli(tmp_path, *args, "--overwrite")[0] == 0


def test_an_unknown_format_fails_in_one_line(tmp_path: Path) -> None:
    code, _, err = _cli(
        tmp_path, "exemplars", "import", "--from", "other", str(exemplar_file(tmp_path))
    )
    assert code == 2 and "unknown exemplar format 'other'; available: sadas" in err


SMALL = ("--k", "3", "--candidates", "6", "--rollouts", "6", "--budget", "12")
FEW = ("--tasks", "2", "--replicates", "1", "--lexical")


def test_value_impact_on_the_imported_pool_is_not_zero_and_compares_with_builtin(
    tmp_path: Path,
) -> None:
    assert (
        _cli(tmp_path, "exemplars", "import", "--from", "sadas", str(exemplar_file(tmp_path)))[0]
        == 0
    )
    code, out, err = _cli(
        tmp_path, "exemplars", "select", "--pool", "sadas", "--name", "vi", *SMALL
    )
    assert code == 0, err
    meta = _saved(tmp_path, "vi")["meta"]
    assert isinstance(meta, dict)
    singles = meta["single_value_impact"]
    assert isinstance(singles, dict) and any(v != 0 for v in singles.values())
    assert meta["value_impact"] != 0
    assert _cli(tmp_path, "exemplars", "select", "--name", "builtin-vi", *SMALL)[0] == 0
    code, out, err = _cli(
        tmp_path, "exemplars", "compare", "vi", "--pool", "sadas", "--against", "builtin-vi", *FEW
    )
    assert code == 0, err
    assert "| set builtin-vi |" in out and "| value impact |" in out
    assert "reward, value impact - set builtin-vi:" in out


def test_the_api_imports_a_pool_and_says_what_it_skipped(tmp_path: Path) -> None:
    path = exemplar_file(tmp_path, [EXEMPLARS[0], 7])
    made = exemplars.import_exemplars("sadas", path, "mine", lenient=True)
    assert made.pool.name == "mine" and len(made.pool.exemplars) == 1
    assert made.skipped == [(2, "not a JSON object")]
    assert made.label_counts() == {"category": {"dismissive": 1}, "style": {"alternatives": 1}}
