"""BERTScore of the mediator's points of contention (AgentMediation Table 7), with the
`bert-score` library from the optional `bertscore` extra.

The model is the user's to name: `bert-base-chinese` for the paper's setting, or the
directory of any BERT-like model on this machine. Nothing is downloaded: a Hub name must
already be in the local Hugging Face cache (`huggingface-cli download bert-base-chinese`
once, where the network is allowed), or scoring stops with one line saying so. The layer
is bert-score's tuned layer for the names it knows (8 for bert-base-chinese, as the
paper's code used) and the last layer for any other model, unless `layers` says.

As in the paper's code, the score is the F1 of one proposal's points against the case's
gold points, averaged over the option-generation and closure proposals. The paper
segmented both texts with jieba first; a Chinese BERT tokeniser splits CJK text into
characters whatever the spaces, so the texts go in as they are.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from disputelab.episode import Episode
from disputelab.errors import DisputelabError
from disputelab.evaluation.metrics import MetricResult
from disputelab.scenario.schema import Scenario

INSTALL_HINT = "install the optional extra: pip install 'disputelab[bertscore]'"
EVALUATOR = "points-bertscore"
METRIC = "points_bertscore"
VERSION = "1"
PAPER_MODEL = "bert-base-chinese"
# Beyond this a tokeniser's model_max_length is the "no limit" placeholder of a tokeniser
# saved without one; bert-score would pass it on as a truncation length and fail.
_NO_LIMIT = 1_000_000


class BertScoreError(DisputelabError, ValueError):
    """BERTScore cannot be computed here: the library or the model is missing."""


def bertscore_available() -> str | None:
    """None when the bert-score library can run here, else why not."""
    for module in ("bert_score", "transformers", "torch"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed; {INSTALL_HINT}"
    return None


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the network
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def model_directory(name: str) -> Path:
    """The local directory of model `name`: itself if it is a directory, else its
    snapshot in the Hugging Face cache; never a download."""
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise BertScoreError(f"BERTScore model directory {name} has no config.json")
        return path
    _offline()
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(name, local_files_only=True))
    except Exception:  # the hub's errors differ by version; all mean "not here"
        raise BertScoreError(
            f"BERTScore model {name!r} is neither a directory nor in the local Hugging Face "
            f"cache; fetch it once with `huggingface-cli download {name}` or name a model "
            "directory"
        ) from None


def default_layers(name: str, directory: Path) -> int:
    """bert-score's tuned layer for a model it knows, else the model's last layer."""
    from transformers import AutoConfig

    # bert-score ships no type information: imported by name, it is typed Any.
    model2layers = importlib.import_module("bert_score.utils").model2layers
    if name in model2layers:
        return int(model2layers[name])
    config = AutoConfig.from_pretrained(str(directory))
    return int(config.num_hidden_layers)


_LOADING = threading.Lock()


def scorer(name: str, layers: int | None = None) -> Any:
    """A loaded bert-score scorer for model `name` (loaded once per name and layer)."""
    why = bertscore_available()
    if why is not None:
        raise BertScoreError(f"BERTScore needs bert-score: {why}")
    with _LOADING:
        return _load(name, layers)


@lru_cache(maxsize=4)
def _load(name: str, layers: int | None) -> Any:
    _offline()
    BERTScorer = importlib.import_module("bert_score").BERTScorer

    directory = model_directory(name)
    n = default_layers(name, directory) if layers is None else layers
    loaded = BERTScorer(model_type=str(directory), num_layers=n, device="cpu")
    tokenizer = loaded._tokenizer
    if tokenizer.model_max_length > _NO_LIMIT:
        tokenizer.model_max_length = int(loaded._model.config.max_position_embeddings)
    return loaded


def bertscore_f1(hypothesis: str, reference: str, model: str) -> MetricResult:
    """BERTScore F1 of `hypothesis` against `reference`; NaN when either is empty."""
    if not hypothesis.strip() or not reference.strip():
        return MetricResult(math.nan, "undefined: an empty text has no BERTScore")
    loaded = scorer(model)
    p, r, f = loaded.score([hypothesis], [reference])
    return MetricResult(
        float(f[0]),
        f"BERTScore F1 ({model}, layer {loaded.num_layers})",
        {"precision": float(p[0]), "recall": float(r[0]), "model": model},
    )


def points_bertscore(episode: Episode, scenario: Scenario, model: str) -> MetricResult:
    """Points-of-contention BERTScore F1, mean over the episode's proposals."""
    from disputelab.protocols.staged.evaluation.agentmediation import proposals

    legal = scenario.legal
    if legal is None or not legal.points_of_contention:
        return MetricResult(math.nan, "undefined: the case has no gold points of contention")
    # Chinese points run on without a separator, as the paper joined them; others take a space.
    sep = "" if scenario.language.startswith("zh") else " "
    gold = sep.join(legal.points_of_contention)
    moves = proposals(episode)
    if not moves:
        return MetricResult(math.nan, "undefined: the mediator made no proposal")
    results = [bertscore_f1(m.points, gold, model) for m in moves]
    values = [x.value for x in results if not math.isnan(x.value)]
    if not values:
        return MetricResult(math.nan, "undefined: no proposal named points of contention")
    return MetricResult(
        sum(values) / len(values),
        f"{results[0].explanation if results[0].defined else 'BERTScore F1'}, mean over "
        f"{len(values)} proposal(s)",
        {"per_proposal": [x.value for x in results], "model": model},
    )
