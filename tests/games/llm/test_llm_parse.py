"""The answer parser on the replies models actually produce, tidy or not."""

from hypothesis import given
from hypothesis import strategies as st

from games.llm.parse import parse_answer


def test_it_takes_the_content_of_a_single_tag():
    assert parse_answer("Reasoning first.\n<answer>Is it alive?</answer>") == "Is it alive?"


def test_it_takes_the_last_of_several_tags():
    assert parse_answer("<answer>draft</answer> wait, better: <answer>final</answer>") == "final"


def test_it_takes_the_innermost_content_of_nested_tags():
    assert parse_answer("<answer>outer <answer>inner</answer> tail</answer>") == "inner"


def test_it_returns_none_without_any_tag():
    assert parse_answer("I would ask whether it is alive.") is None


def test_it_returns_none_for_an_empty_or_blank_tag():
    assert parse_answer("<answer></answer>") is None
    assert parse_answer("<answer>  \n </answer>") is None


def test_a_blank_last_tag_is_not_replaced_by_an_earlier_one():
    assert parse_answer("<answer>first</answer> then <answer> </answer>") is None


def test_it_takes_the_rest_of_a_reply_cut_off_inside_an_open_tag():
    assert parse_answer("thinking <answer>Is it made of metal") == "Is it made of metal"


def test_an_empty_open_tag_at_the_end_falls_back_to_the_last_closed_one():
    assert parse_answer("<answer>Yes</answer> and <answer>") == "Yes"


def test_a_closing_tag_without_an_opening_one_is_no_answer():
    assert parse_answer("The answer is Yes</answer>") is None


def test_it_ignores_case_and_spaces_inside_the_tags():
    assert parse_answer("< ANSWER >No</ Answer >") == "No"


def test_it_handles_a_very_long_reply():
    reasoning = "hmm " * 500_000
    assert parse_answer(reasoning + "<answer>Yes</answer>" + reasoning) == "Yes"
    assert parse_answer("<answer>" + "x" * 1_000_000 + "</answer>") == "x" * 1_000_000


def test_it_handles_none_and_empty_input():
    assert parse_answer(None) is None
    assert parse_answer("") is None


@given(st.text())
def test_it_never_fails_and_never_returns_a_tag(text):
    result = parse_answer(text)
    assert result is None or (
        result == result.strip() and result and "answer>" not in result.lower().replace(" ", "")
    )


@given(st.text(alphabet=st.characters(blacklist_characters="<>"), min_size=1).filter(str.strip))
def test_it_returns_any_tag_free_content_unchanged_apart_from_spaces(content):
    assert parse_answer(f"noise <answer>{content}</answer> trailing") == content.strip()
