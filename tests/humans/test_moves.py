"""Moves are validated in one place: what a person types (or a form posts) is read
against the field's options and bounds, Enter takes the default, and anything else is
refused with one line that says why."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.humans import (
    AmountField,
    MoveError,
    Needs,
    Option,
    PickField,
    SeatPrompt,
    SeatRef,
    TextField,
    check,
    field_help,
    parse,
    validate,
)

TOPIC = PickField(
    "stance:rent",
    "rent",
    (Option("A", "unchanged"), Option("B", "up 3%"), Option("C", "up 6%")),
    ("B",),
    1,
    3,
)
SIGNAL = PickField(
    "signal", "signal", (Option("continue", "go on"), Option("consensus", "agree")), ("continue",)
)
PRICE = AmountField("price", "price", 0.0, 5000.0, 1200.0, "GBP")


def prompt(*fields: object) -> SeatPrompt:
    return SeatPrompt(
        SeatRef("parties:tenant", "parties", "Mira"), "your turn", "brief", (), tuple(fields)
    )  # type: ignore[arg-type]


def test_enter_takes_the_default_of_every_field() -> None:
    move = validate(prompt(TOPIC, SIGNAL, PRICE, TextField("say", "say")), {})
    assert move.picks("stance:rent") == ("B",)
    assert move.pick("signal") == "continue"
    assert move.amount("price") == 1200.0
    assert move.text("say") == ""


def test_the_first_option_named_is_backed_and_the_rest_are_also_acceptable() -> None:
    assert parse(TOPIC, "c, a") == ("C", "A")
    assert parse(TOPIC, "C C a") == ("C", "A")  # a repeat counts once


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("D", "rent: 'D' is not an option; choose from A, B, C"),
        ("-", "rent: choose one option from A, B, C"),
        ("A,B,C,A,Z", "rent: 'Z' is not an option; choose from A, B, C"),
    ],
)
def test_an_answer_outside_the_options_is_refused_in_one_line(raw: str, reason: str) -> None:
    with pytest.raises(MoveError) as caught:
        parse(TOPIC, raw)
    assert str(caught.value) == reason
    assert caught.value.key == "stance:rent"


def test_a_field_that_takes_one_option_refuses_two() -> None:
    with pytest.raises(MoveError, match="choose one option, not 2"):
        parse(SIGNAL, "continue consensus")


def test_a_pick_that_may_be_left_empty_takes_a_dash_for_none() -> None:
    optional = PickField("propose:rent", "propose rent", TOPIC.options, (), min_picks=0)
    assert parse(optional, "-") == ()
    assert parse(optional, "") == ()


@pytest.mark.parametrize(
    ("raw", "value"), [("1,250", 1250.0), ("$300", 300.0), ("42 GBP", 42.0), ("", 1200.0)]
)
def test_an_amount_is_read_as_people_write_it(raw: str, value: float) -> None:
    assert parse(PRICE, raw) == value


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("-5", "price: -5.00 is out of range (from 0.00 to 5,000.00)"),
        ("9000", "price: 9,000.00 is out of range (from 0.00 to 5,000.00)"),
        ("lots", "price: 'lots' is not a number"),
        ("nan", "price: 'nan' is not a number"),
    ],
)
def test_an_amount_out_of_range_or_not_a_number_is_refused(raw: str, reason: str) -> None:
    with pytest.raises(MoveError) as caught:
        parse(PRICE, raw)
    assert str(caught.value) == reason


def test_a_typed_amount_from_a_form_is_checked_the_same_way() -> None:
    assert check(PRICE, 10) == 10.0
    for bad in (math.inf, True, "12"):
        with pytest.raises(MoveError):
            check(PRICE, bad)


def test_words_lose_control_characters_and_keep_their_length_bound() -> None:
    say = TextField("say", "say", max_chars=10)
    assert parse(TextField("say", "say"), "hi\x1b[31mthere\x00") == "hi[31mthere"
    with pytest.raises(MoveError, match="at most 10 characters"):
        parse(say, "a" * 11)
    with pytest.raises(MoveError, match="say something"):
        parse(TextField("say", "say", required=True), "   ")


def test_a_field_that_needs_another_is_not_asked_without_it() -> None:
    action = PickField(
        "action", "action", (Option("offer", "offer"), Option("accept", "accept")), ("offer",)
    )
    price = AmountField("price", "price", 0, 10, None, needs=Needs("action", ("offer",)))
    assert validate(prompt(action, price), {"action": "accept"}).values["price"] is None
    with pytest.raises(MoveError, match="give an amount"):
        validate(prompt(action, price), {"action": "offer"})


def test_a_choice_the_prompt_does_not_have_is_refused() -> None:
    with pytest.raises(MoveError, match="forged: not a choice of this move"):
        validate(prompt(SIGNAL), {"forged": "x"})


def test_help_lists_the_options_and_what_enter_takes() -> None:
    lines = field_help(TOPIC)
    assert "  A) unchanged" in lines
    assert lines[-1] == "Enter alone takes: B"


@given(st.text(max_size=40))
def test_anything_typed_at_a_pick_is_a_valid_pick_or_a_one_line_refusal(raw: str) -> None:
    try:
        chosen = parse(TOPIC, raw)
    except MoveError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("rent: ")
    else:
        assert isinstance(chosen, tuple) and 1 <= len(chosen) <= 3
        assert set(chosen) <= {"A", "B", "C"} and len(set(chosen)) == len(chosen)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_an_amount_is_taken_exactly_when_it_is_finite_and_in_range(x: float) -> None:
    inside = math.isfinite(x) and 0.0 <= x <= 5000.0
    try:
        assert check(PRICE, x) == x
        assert inside
    except MoveError as exc:
        assert not inside and "\n" not in str(exc)
