"""BERTScore of the points of contention (AgentMediation Table 7) with the bert-score
library, on a tiny BERT this test builds itself (random weights, a vocabulary of a few
dozen tokens), so nothing is downloaded."""

from __future__ import annotations

import asyncio
import importlib.util
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.experiments.judging import evaluate_run
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.staged.evaluation import bertscore
from disputelab.protocols.staged.tables import staged_markdown
from disputelab.scenario import load_scenario
from disputelab.scenario.io import save_scenario
from disputelab.scenario.schema import LegalContext
from disputelab.store.sqlite import Store
from tests.helpers import scenario

MODULES = ("bert_score", "transformers", "torch")
MISSING = [m for m in MODULES if importlib.util.find_spec(m) is None]
needs_bert = pytest.mark.skipif(
    bool(MISSING),
    reason=f"{', '.join(MISSING)} not installed (pip install 'disputelab[bertscore]')",
)
WORDS = ["the", "rent", "deposit", "repairs", "landlord", "tenant", "damp", "boiler"]
WORDS += ["is", "was", "who", "pays", "for", "and", "of"]


def tiny_bert(where: Path) -> Path:
    """A two-layer BERT with random weights and a small vocabulary, saved to `where`."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    where.mkdir()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    (where / "vocab.txt").write_text("\n".join([*special, *WORDS, *"租金押金维修"]) + "\n")
    # No model_max_length: bert-score must cope with a tokeniser saved without one.
    BertTokenizer(str(where / "vocab.txt")).save_pretrained(str(where))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(special) + len(WORDS) + 6,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(str(where))
    return where


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> str:
    if MISSING:
        pytest.skip(f"{', '.join(MISSING)} not installed")
    return str(tiny_bert(tmp_path_factory.mktemp("bert") / "tiny"))


@pytest.mark.slow  # loads the BERTScore model (about a minute on a loaded machine)
@needs_bert
def test_identical_texts_score_one_and_different_ones_less(model: str) -> None:
    same = bertscore.bertscore_f1("who pays for the boiler", "who pays for the boiler", model)
    other = bertscore.bertscore_f1("the rent was damp", "who pays for the boiler", model)
    assert same.value == pytest.approx(1.0, abs=1e-5)
    assert 0 < other.value < same.value
    assert "layer 2" in same.explanation  # an unknown model's last layer
    assert set(same.detail) >= {"precision", "recall"}
    assert math.isnan(bertscore.bertscore_f1("", "who pays", model).value)


def test_a_model_that_is_not_on_this_machine_is_named_without_a_download(tmp_path: Path) -> None:
    if MISSING:
        pytest.skip(f"{', '.join(MISSING)} not installed")
    with pytest.raises(bertscore.BertScoreError, match="not-a-real/model"):
        bertscore.model_directory("not-a-real/model")
    (tmp_path / "empty").mkdir()
    with pytest.raises(bertscore.BertScoreError, match=r"no config\.json"):
        bertscore.model_directory(str(tmp_path / "empty"))


def _legal_case(tmp_path: Path) -> Path:
    sc = scenario("tenancy")
    sc.legal = LegalContext(
        dispute_type="tenancy",
        brief=sc.background,
        points_of_contention=["who pays for the boiler repairs", "the rent deposit"],
        legal_bases=["Housing Act 1988 s.11"],
        stored_retrieval=["Landlord and Tenant Act 1985 s.11", "Housing Act 1988 s.11"],
    )
    path = tmp_path / "legal-tenancy.yaml"
    save_scenario(sc, path)
    return path


@pytest.mark.slow  # loads the BERTScore model (about a minute on a loaded machine)
@needs_bert
def test_the_cli_scores_a_staged_run_and_stores_the_model_with_it(
    model: str, tmp_path: Path
) -> None:
    case = _legal_case(tmp_path)
    store = tmp_path / "runs"

    def cli(*args: str) -> tuple[int, str]:
        r = CliRunner().invoke(app, ["--store", str(store), *args])
        return r.exit_code, r.output

    code, out = cli("run", str(case), "--protocol", "staged", "--mediator", "rule")
    assert code == 0, out
    code, out = cli("evaluate", "last", "--evaluator", "points-bertscore", "--bert-model", model)
    assert code == 0, out
    st = Store(store)
    (eid,) = [e for e in st.episode_ids(st.resolve_run("last"))]
    (score,) = [s for s in st.scores(eid) if s.evaluator == f"points-bertscore:{model}"]
    want = bertscore.points_bertscore(st.load_episode(eid).episode, load_scenario(case), model)
    assert 0 < score.value <= 1 and score.value == pytest.approx(want.value)

    code, out = cli("evaluate", "last", "--evaluator", "points-bertscore")
    assert code == 2 and "needs --bert-model" in out and "Traceback" not in out
    code, out = cli(
        "evaluate", "last", "--evaluator", "points-bertscore", "--bert-model", "no-such/bert"
    )
    assert code == 2 and "'no-such/bert'" in out and "local Hugging Face cache" in out


@pytest.mark.slow  # loads the BERTScore model (about a minute on a loaded machine)
@needs_bert
def test_table_7_shows_bertscore_beside_rouge_once_it_was_scored(
    model: str, tmp_path: Path
) -> None:
    case = _legal_case(tmp_path)
    store = Store(tmp_path / "runs")
    spec = ExperimentSpec(
        name="t7",
        protocol="staged",
        scenarios=[str(case)],
        conditions=["expertise:none", "expertise:stored-top3"],
        mediators=["rule"],
        replicates=1,
        rounds=1,
    )
    hub = ModelHub(store.root / "cache.sqlite")
    summary = asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), hub))
    assert summary.failed == 0, summary.errors
    config = spec.model_dump()
    assert "BERTScore" not in staged_markdown(store, summary.run_id, config)
    results = asyncio.run(
        evaluate_run(store, summary.run_id, "points-bertscore", hub, [], bert_model=model)
    )
    assert all(0 < r["points_bertscore"].value <= 1 for r in results.values())
    text = staged_markdown(store, summary.run_id, config)
    header = next(line for line in text.splitlines() if line.startswith("| Mediator |"))
    assert header.split("|")[2].strip() == "BERTScore F1↑"
    assert f"with {model}" in text


@pytest.mark.slow  # loads the BERTScore model (about a minute on a loaded machine)
@needs_bert
def test_an_experiment_spec_names_its_bertscore_model_and_scores_with_it(
    model: str, tmp_path: Path
) -> None:
    case = _legal_case(tmp_path)
    grid = {
        "name": "t7spec",
        "protocol": "staged",
        "scenarios": [str(case)],
        "conditions": ["expertise:stored-top3"],
        "replicates": 1,
        "rounds": 1,
        "evaluators": ["points-bertscore"],
    }
    with pytest.raises(ValueError, match="points-bertscore needs bert_model"):
        ExperimentSpec.model_validate(grid)
    spec = ExperimentSpec.model_validate({**grid, "bert_model": model})
    store = Store(tmp_path / "runs")
    hub = ModelHub(store.root / "cache.sqlite")
    summary = asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), hub))
    assert summary.failed == 0, summary.errors
    (eid,) = [e for e in store.episode_ids("t7spec") if e.endswith("/rule/r0")]
    (score,) = [s for s in store.scores(eid) if s.evaluator == f"points-bertscore:{model}"]
    assert 0 < score.value <= 1
