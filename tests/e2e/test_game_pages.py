"""The pages around a game in real Chromium: long words wrap, the end of a game leads somewhere,
and the lobby counts down and can be left."""

from __future__ import annotations

import re

import pytest

from tests.e2e.waits import wait_for_js

pytestmark = pytest.mark.e2e


def start_twenty_questions(page) -> None:
    page.goto("/")
    page.get_by_role("button", name="Start a game").click()
    page.wait_for_url(re.compile(r"/tables/\d+/$"))


def ask(page, text: str) -> None:
    before = page.locator("#history .answer").count()
    field = page.get_by_label("Your question")
    field.fill(text)
    field.press("Enter")
    wait_for_js(
        page,
        f"document.querySelectorAll('#history .answer').length > {before}"
        " || document.querySelector('#result') !== null",
    )


def test_a_long_word_wraps_instead_of_widening_the_page(page) -> None:
    page.set_viewport_size({"width": 800, "height": 700})
    start_twenty_questions(page)
    ask(page, "Is it " + "x" * 280 + "?")
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1]


def test_the_end_of_twenty_questions_reveals_the_word_and_offers_another_game(page) -> None:
    start_twenty_questions(page)
    first_table = page.url
    for number in range(20):
        ask(page, f"Question {number}: is it alive?")
    result = page.locator("#result")
    assert re.search(r"The secret word was \S", result.inner_text())
    assert "20 of 20 questions used" in result.inner_text()
    page.get_by_role("link", name="Home").focus()  # keyboard-reachable
    page.get_by_role("button", name="Play again").press("Enter")
    page.wait_for_url(re.compile(r"/tables/\d+/$"))
    assert page.url != first_table
    assert page.get_by_label("Your question").is_visible()


def test_a_person_waits_in_the_lobby_with_a_countdown_then_leaves(page) -> None:
    page.goto("/play/undercover/")
    page.get_by_label("How many of the 5 players should be people?").select_option("3")
    page.get_by_role("button", name="Join").click()
    page.wait_for_url(re.compile(r"/tables/\d+/$"))
    assert "1 of 3" in page.locator("#lobby-filled").inner_text()
    countdown = page.locator("#lobby-deadline time")
    first = countdown.inner_text()
    wait_for_js(page, f"document.querySelector('#lobby-deadline time').textContent !== {first!r}")
    assert re.fullmatch(r"(\d+ min )?\d+ s", countdown.inner_text())
    page.get_by_role("button", name="Leave").click()
    page.wait_for_url(re.compile(r"/$"))
    page.goto("/play/undercover/")  # joining again gives the freed place, not a second one
    page.get_by_label("How many of the 5 players should be people?").select_option("3")
    page.get_by_role("button", name="Join").click()
    page.wait_for_url(re.compile(r"/tables/\d+/$"))
    assert "1 of 3" in page.locator("#lobby-filled").inner_text()
