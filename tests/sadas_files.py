"""Small files in the shapes of the remediator paper's released data (SADAS), written for
the tests: an exemplar list (`all_icl_example.json`: a JSON list of `{conversation,
last_sentence, remediation}`, the violating line marked `【violation】`) and a rewrite-pair
CSV (`train_bargaining.csv`: one `text` column of instruction-formatted pairs). Every
dialogue here is ours; none is taken from the released files.

The exemplars cover each violation category once in a product sale (the seller opens at
$80, the buyer at $50), each rewrite doing one repair, so the labels inferred from the
text are known: `EXPECTED` gives them by record.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path

OPENING = (
    "# Dialogue:\n"
    "buyer: 您好，听说贵厂还有一批富余的精密轴承？\n"
    "seller: 是的，这批轴承我们可以一次性出货，单价$80。\n"
    "buyer: $50一件您看可以吗？\n"
)


def _item(violation: str, remediation: str, middle: str = "") -> dict[str, str]:
    return {
        "conversation": OPENING + middle + f"seller:【violation】{violation}",
        "last_sentence": violation,
        "remediation": f"# Remediation:\n{remediation}",
    }


EXEMPLARS = [
    _item(
        "$50？别浪费我的时间了，这个价我们不考虑。我们的价格就是$75。",
        "我理解您想控制成本，不过$50确实低于我们的成本。价格定在$75，我们也很愿意和贵司长期合作。",
    ),
    _item(
        "你这个出价也太外行了吧，$55？我们最低$72。",
        "不好意思，$55和我们的预期差距比较大，我们最低能做到$72。",
        "seller: 这个价格太低了，我们最多让到$76。\nbuyer: 那$55呢？\n",
    ),
    _item(
        "相信我，其他买家都抢着要，$78一件已经很便宜了。",
        "这批货确实很受欢迎，考虑到贵司的情况，我们可以降到$70一件。",
    ),
    _item(
        "我只关心我们的利润，低于$74免谈。",
        "我们需要保证合理的利润，价格不能低于$74。",
    ),
    _item(
        "你们那边讲究的那套客套我没兴趣，直接说价：$76。",
        "感谢您的耐心，我们的报价是$76，希望您能理解。",
    ),
    # A violation no category word names: labelled with no category, still kept.
    _item("$76，就这个数。", "抱歉，我们的报价是$76，请您考虑一下。"),
]
# Record number -> (category, style) the labelling rule gives.
EXPECTED = {
    1: ("dismissive", "alternatives"),
    2: ("insulting", "apologise"),
    3: ("dishonest", "concede"),
    4: ("self-serving", "restate"),
    5: ("culture", "empathise"),
    6: ("", "apologise"),
}


def exemplar_file(folder: Path, items: Sequence[object] | None = None) -> Path:
    path = folder / "all_icl_example.json"
    data = EXEMPLARS if items is None else list(items)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2))
    return path


def pair(lines: list[str], rewrite: str) -> str:
    """One instruction-formatted rewrite pair (our wording of the instruction)."""
    dialogue = "\n".join(lines)
    last = lines[-1].split(": ", 1)[1]
    return (
        "<s>Human: 下面是一段谈判，请把对话里的最后一句话改写得更得体。\n"
        f"谈判的对话如下：\n{dialogue}\n"
        f'对话里最后一句话"{last}"有失礼貌，请给出改写:\n'
        f"</s><s>Assistant: {rewrite}\n</s>"
    )


SALARY = [
    "人物A: 欢迎加入我们团队，我们给你的月薪是$4000。",
    "人物B: 谢谢，不过以我的经验，我希望月薪能到$7000。",
    "人物A: $7000超出了预算，$4500怎么样？",
    "人物B: 你们这点工资也太寒酸了，$6500，少一分都不行。",
]
HOUSE = [
    "人物A: 您好，这套三居室的房子还在卖吗？",
    "人物B: 在卖，要价$900,000。",
    "人物A: $700,000可以吗？",
    "人物B: $700,000？你是来捣乱的吧，最少$880,000。",
]
PAIRS = [
    pair(SALARY, "我理解公司有预算的考虑，结合我的经验，我希望月薪在$6500左右，我们可以再商量。"),
    pair(HOUSE, "抱歉，$700,000离我们的预期有些远，我们可以让一点，$860,000您看怎么样？"),
    pair(HOUSE, "抱歉，$700,000离我们的预期有些远，我们可以让一点，$860,000您看怎么样？"),
]


def pair_file(folder: Path, texts: Sequence[str] | None = None) -> Path:
    path = folder / "train_bargaining.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text"])
        for text in PAIRS if texts is None else texts:
            writer.writerow([text])
    return path
