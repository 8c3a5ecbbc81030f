"""Prompt text for the LLM agents, in English and Chinese, written for disputelab.

Builders take only what the role may see: a party gets the public scenario plus its own
profile; mediators get the public scenario alone. The dialogue comes as `PublicTurn`s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from disputelab.agents.base import PublicScenario, PublicTurn
from disputelab.agents.settings import RECENT_TURNS, CultureStatement, PartyStyle
from disputelab.scenario.schema import CultureProfile, Party
from disputelab.scenario.tki import MODE_POINTS

_STYLE_EN = {
    "competing": "You press hard for your own priorities and concede slowly.",
    "collaborating": "You look for trades that give everyone what matters most to them.",
    "compromising": "You aim for a fair middle ground and concede step by step.",
    "avoiding": "You dislike confrontation, deflect contested points and engage sparingly.",
    "accommodating": "You value the relationship and give ground readily.",
}
_STYLE_ZH = {
    "competing": "你强硬地争取自己的重点利益，让步很慢。",
    "collaborating": "你寻找让各方都得到最看重之物的交换方案。",
    "compromising": "你追求公平的折中，逐步让步。",
    "avoiding": "你不喜欢正面冲突，回避有争议的问题，很少主动表态。",
    "accommodating": "你重视关系，愿意较快让步。",
}

_EN = {
    "party_intro": "You are {name} ({role}) in a dispute: {title}.",
    "background": "Background, known to everyone at the table:",
    "history": "History:",
    "topics": "Topics and their options:",
    "private": "Your private brief (nobody else sees it):",
    "objective": "Objective",
    "fallback": "If the talks fail",
    "weights": "How much each topic matters to you (points out of 100)",
    "ranking": "Your ranking per topic, best first",
    "unacceptable": "unacceptable",
    "style": "Your style",
    "point": (
        "Your conflict stance on two 0-10 scales: assertiveness {a:g} (how hard you push "
        "for your own interests), cooperativeness {c:g} (how much you try to meet the "
        "others' concerns)"
    ),
    "reactivity": "Emotional reactivity (0 calm to 1 volatile)",
    "traits": "Traits",
    "notes": "Notes",
    "party_task": (
        "Each turn, reply with: a private thought; what you say aloud (one to three "
        "sentences, in character, in English); for every topic the option you back now and "
        "every option you would accept; and a signal: continue, consensus (you accept the "
        "package the others currently back) or walk_away (you leave the talks)."
    ),
    "dialogue": "The conversation so far (most recent last):",
    "empty": "(nobody has spoken yet)",
    "skipped": "(... {n} turns left out ...)",
    "memory": "Your own earlier private thoughts (only you know them), oldest first:",
    "your_turn": "It is your turn: party turn {turn} of {budget}.",
    "voice_thought": (
        'You chose to speak now because of this private thought: "{thought}". Say it '
        "to the table in your own words, as part of your turn."
    ),
    "mediator_intro": (
        "You are a neutral mediator in a dispute: {title}. You see only what is said at "
        "the table, never the parties' private briefs."
    ),
    "parties": "Parties",
    "when": (
        "Decide whether to speak now. Speak when talks stall, positions harden, someone is "
        "confused or hostile, or you see a package that could work. Stay silent when the "
        "parties are making progress on their own or you spoke very recently."
    ),
    "how": (
        "Say what you will say now as the mediator: two to four sentences, neutral, concrete, "
        "in English. Move the parties toward an agreement they can all accept."
    ),
    "social_when": (
        "Before planning anything, decide whether the table needs you now. Look for four "
        "kinds of trouble among the parties: they see the issues differently, emotions "
        "(anger, distrust) are running high, someone reasons badly or anchors, or they talk "
        "past each other or fall silent. Name who shows which trouble. Step in only on clear "
        "evidence, not before every party has had its say since your last turn, and not too "
        "often. Give your reason, whether to speak, and a rating from 1 (no need at all) to "
        "5 (you must step in now), decimals allowed."
    ),
    "consensus_state": "Where the parties stand, from what each last said it backs:",
    "agreed": "all back {option}",
    "open": "open ({positions})",
    "candidates": (
        "Think of three different ways you could intervene now, each from a mediation "
        "approach: facilitative, evaluative, transformative or settlement-focused."
    ),
    "rate": (
        "Rate how much each candidate intervention is needed and would help now, 1 to 5 "
        "(decimals allowed), on four factors: perception alignment (the parties see the "
        "issues differently), emotional dynamics (anger, distrust), cognitive challenges "
        "(faulty reasoning, anchoring, too few options) and communication breakdowns "
        "(talking past each other, silence, hostility). Reason first, then rate."
    ),
    "articulate": (
        "Speak as the mediator now, carrying out this plan: {plan}. Two to four sentences, "
        "neutral, concrete, in English."
    ),
    "phrase": (
        "Put this move into words as {name}, in character, one to three sentences in "
        "English. Say only what the move contains; do not reveal your private brief."
    ),
    "move": "Your move",
}

_ZH = {
    "party_intro": "你是{name}（{role}），正在参与一场纠纷：{title}。",
    "background": "背景（在座各方都知道）：",
    "history": "历史：",
    "topics": "议题及选项：",
    "private": "你的私人信息（其他人看不到）：",
    "objective": "目标",
    "fallback": "谈判破裂时的退路",
    "weights": "各议题对你的重要程度（满分100）",
    "ranking": "你对各议题选项的排序（最好在前）",
    "unacceptable": "不可接受",
    "style": "你的风格",
    "point": (
        "你在冲突中的姿态（0到10分）：坚持度{a:g}（你多大程度上争取自身利益），"
        "合作度{c:g}（你多大程度上照顾对方的关切）"
    ),
    "reactivity": "情绪反应强度（0平静，1易激动）",
    "traits": "特点",
    "notes": "备注",
    "party_task": (
        "每一轮请给出：私下的想法；你公开说的话（一到三句，符合角色，用中文）；每个议题上"
        "你现在支持的选项和你能接受的所有选项；以及信号：continue（继续）、consensus（接受"
        "其他各方当前支持的方案）或 walk_away（退出谈判）。"
    ),
    "dialogue": "目前的对话（最新的在最后）：",
    "empty": "（还没有人发言）",
    "skipped": "（……中间省略{n}轮……）",
    "memory": "你之前的私下想法（只有你自己知道），按时间顺序：",
    "your_turn": "轮到你发言：第{turn}轮，共{budget}轮。",
    "voice_thought": "你决定现在发言，是因为你心里想到：“{thought}”。请在这一轮里用自己的话把它说出来。",
    "mediator_intro": "你是这场纠纷的中立调解员：{title}。你只能看到各方公开说的话，看不到他们的私人信息。",
    "parties": "各方",
    "when": (
        "判断现在是否需要发言。当谈判停滞、立场变得强硬、有人困惑或敌对、或你看到可行的方案时发言；"
        "当各方自己在推进或你刚刚发过言时保持沉默。"
    ),
    "how": "以调解员身份说出你现在要说的话：两到四句，中立、具体，用中文，推动各方达成都能接受的协议。",
    "social_when": (
        "先判断现在是否需要你介入。留意各方之间的四类问题：对问题理解不同、情绪（愤怒、不信任）激烈、"
        "推理有误或被锚定、各说各话或沉默。指出谁有哪类问题。只有证据明确时才介入；在各方自你上次发言后"
        "都有机会发言之前不要介入，也不要太频繁。给出理由、是否发言，以及1（完全不需要）到5（必须立即介入）"
        "的评分，可用小数。"
    ),
    "consensus_state": "各方立场（根据每方最近表示支持的选项）：",
    "agreed": "都支持{option}",
    "open": "未定（{positions}）",
    "candidates": "想出三种现在可以采取的不同介入方式，分别来自不同的调解方法：促进式、评估式、转化式或以和解为导向。",
    "rate": (
        "对每种介入方式在四个方面打分（1到5分，可用小数），衡量现在是否需要以及是否有帮助："
        "认知一致（各方对问题理解不同）、情绪动态（愤怒、不信任）、认知障碍（推理错误、锚定、"
        "方案太少）和沟通障碍（各说各话、沉默、敌意）。先说理由，再打分。"
    ),
    "articulate": "现在以调解员身份发言，执行这个计划：{plan}。两到四句，中立、具体，用中文。",
    "phrase": "以{name}的身份把这一步用语言表达出来，符合角色，一到三句中文。只说这一步包含的内容，不要透露你的私人信息。",
    "move": "你的这一步",
}


def texts(language: str) -> dict[str, str]:
    return _ZH if language.startswith("zh") else _EN


def topics_block(public: PublicScenario) -> str:
    lines = []
    for t in public.topics:
        options = "; ".join(f"{o.id}) {o.label}" for o in t.options)
        lines.append(f"- {t.id} ({t.name}): {options}")
    return "\n".join(lines)


def scenario_block(public: PublicScenario) -> str:
    x = texts(public.language)
    parts = [x["background"], public.background]
    if public.history:
        parts += [x["history"], public.history]
    parts += [x["topics"], topics_block(public)]
    return "\n".join(parts)


def party_system(
    public: PublicScenario,
    party: Party,
    style: PartyStyle = "persona",
    culture: CultureStatement = "scores",
) -> str:
    """A party's instructions. A `general` party gets no strategy, reactivity, culture
    or traits: the brief alone, as in AgentMediation's Default row and ProMediate's
    General mode."""
    x = texts(public.language)
    styles = _STYLE_ZH if public.language.startswith("zh") else _STYLE_EN
    prefs = []
    for t in public.topics:
        p = party.preferences[t.id]
        line = f"- {t.id}: {' > '.join(p.ranking)}"
        if p.unacceptable:
            line += f"; {x['unacceptable']}: {', '.join(p.unacceptable)}"
        prefs.append(line)
    persona = party.persona
    # What everyone at the table shares comes first and the party's own brief after it,
    # so every seat's requests in a scenario open with one long common prefix, which
    # providers with prompt caching bill and serve once.
    lines = [
        scenario_block(public),
        x["party_intro"].format(name=party.name, role=party.role or "-", title=public.title),
        x["private"],
        f"- {x['objective']}: {party.objective}",
        f"- {x['fallback']}: {party.fallback.description or '-'}",
        f"- {x['weights']}: " + ", ".join(f"{t}={w}" for t, w in party.weights.items()),
        f"- {x['ranking']}:",
        *prefs,
    ]
    if style == "persona":
        lines += [
            f"- {x['style']}: {styles[persona.strategy]}",
            f"- {x['reactivity']}: {persona.reactivity:.1f}",
        ]
        if persona.point not in MODE_POINTS.values():  # a point of its own, not a mode's
            a, c = (round(v, 1) for v in persona.point)
            lines.insert(-1, f"- {x['point'].format(a=a, c=c)}")
        if persona.culture is not None:
            lines.append(culture_line(persona.culture, culture, public.language))
        if persona.traits:
            lines.append(f"- {x['traits']}: {', '.join(persona.traits)}")
    if party.private_notes:
        lines.append(f"- {x['notes']}: {party.private_notes}")
    lines.append(x["party_task"])
    return "\n".join(lines)


def speaker_label(names: Mapping[str, str], turn: PublicTurn) -> str:
    """How a prompt names a turn's speaker: the party's name (by id), or 'Mediator'."""
    return "Mediator" if turn.role == "mediator" else names.get(turn.speaker, turn.speaker)


def dialogue_block(
    public: PublicScenario,
    dialogue: Sequence[PublicTurn],
    window: int | None = RECENT_TURNS,
    keep_first: int = 0,
) -> str:
    """The dialogue an agent reads: its last `window` turns (all of them for None), and
    always its first `keep_first` turns (a closing proposal keeps the statements and the
    first proposal in view however long the bargaining ran)."""
    x = texts(public.language)
    names = {p.id: p.name for p in public.parties}
    start = 0 if window is None else max(0, len(dialogue) - window)
    head = list(dialogue[: min(keep_first, start)])
    recent = list(dialogue[start:])
    if not head and not recent:
        return f"{x['dialogue']}\n{x['empty']}"
    lines = [x["dialogue"]]
    lines += [f"{speaker_label(names, t)}: {t.text}" for t in head]
    if head and start > len(head):
        lines.append(x["skipped"].format(n=start - len(head)))
    lines += [f"{speaker_label(names, t)}: {t.text}" for t in recent]
    return "\n".join(lines)


# What each Hofstede dimension measures, in our words, for the described statement.
_DIMENSIONS_EN = (
    ("power_distance", "power distance", "how readily unequal power and rank are accepted"),
    ("individualism", "individualism", "how far people look after themselves before the group"),
    ("masculinity", "masculinity", "how much winning and achievement outweigh care and modesty"),
    (
        "uncertainty_avoidance",
        "uncertainty avoidance",
        "how uneasy ambiguity and the unfamiliar make people",
    ),
    (
        "long_term_orientation",
        "long-term orientation",
        "how willingly present gains are traded for future ones",
    ),
    ("indulgence", "indulgence", "how freely wishes and enjoyment are acted on, not restrained"),
)
_DIMENSIONS_ZH = {
    "power_distance": "权力距离（对权力和地位不平等的接受程度）",
    "individualism": "个人主义（先顾自己而非群体的程度）",
    "masculinity": "男性化（重视竞争和成就胜过关怀与谦让的程度）",
    "uncertainty_avoidance": "不确定性规避（对模糊和陌生事物的不安程度）",
    "long_term_orientation": "长期导向（为将来利益放弃眼前利益的意愿）",
    "indulgence": "放纵（随心满足愿望而非克制的程度）",
}


def culture_line(c: CultureProfile, statement: CultureStatement, language: str) -> str:
    """A party's culture: six numbers, or (`described`) the culture named and each
    dimension explained, as SoCRATES's deterministic culture statement is."""
    if statement == "scores":
        return (
            f"- Hofstede: PDI {c.power_distance:.0f}, IDV {c.individualism:.0f}, "
            f"MAS {c.masculinity:.0f}, UAI {c.uncertainty_avoidance:.0f}, "
            f"LTO {c.long_term_orientation:.0f}, IVR {c.indulgence:.0f}"
        )
    if language.startswith("zh"):
        scores = "；".join(f"{_DIMENSIONS_ZH[f]}{getattr(c, f):.0f}" for f, *_ in _DIMENSIONS_EN)
        where = f"你来自{c.name}的文化。" if c.name else ""
        return f"- 文化背景：{where}霍夫斯泰德六维度得分（0到100）：{scores}。请按此文化行事。"
    scores = "; ".join(
        f"{label} {getattr(c, f):.0f} ({meaning})" for f, label, meaning in _DIMENSIONS_EN
    )
    where = f"You come from the culture of {c.name}. " if c.name else ""
    return (
        f"- Culture: {where}On Hofstede's six dimensions, each scored 0 to 100 (higher means "
        f"more): {scores}. Let these shape how you negotiate."
    )


def mediator_system(public: PublicScenario) -> str:
    x = texts(public.language)
    parties = ", ".join(f"{p.name} ({p.role})" if p.role else p.name for p in public.parties)
    return "\n".join(  # the shared scenario first, as for the parties
        [
            scenario_block(public),
            x["mediator_intro"].format(title=public.title),
            f"{x['parties']}: {parties}",
        ]
    )
