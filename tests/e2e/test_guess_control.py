"""The Guess control of Twenty Questions in real Chromium: type-ahead from the candidate list, a
word that is not a candidate refused before anything is sent (and by the server when sent
anyway), a wrong guess answered No and counted, the right one ending the game."""

from __future__ import annotations

import json
import re

import pytest

from games.twenty_questions import CANDIDATES
from tests.e2e.test_play_in_the_browser import ask, chunks, set_question
from tests.e2e.waits import wait_for_js

pytestmark = pytest.mark.e2e


def start(page) -> None:
    page.goto("/")
    page.get_by_role("button", name="Start a game").click()
    page.wait_for_url(re.compile(r"/tables/\d+/$"))
    wait_for_js(page, "document.querySelector('#socket-status')?.hidden !== false")


def guess(page, word: str) -> None:
    answers = page.locator("#history .answer")
    before = answers.count()
    field = page.get_by_label("Your guess")
    field.fill(word)
    page.get_by_role("button", name="Guess").click()
    wait_for_js(
        page,
        f"document.querySelectorAll('#history .answer').length > {before}"
        " || document.querySelector('#result') !== null",
    )


def test_a_person_guesses_with_the_guess_control(page) -> None:
    from playwright.sync_api import expect

    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    start(page)
    field = page.get_by_label("Your guess")
    expect(page.get_by_label("Your question")).to_be_visible()  # beside the free question box
    options = page.locator("#candidate-words option")
    assert options.count() == len(CANDIDATES) == 157
    assert field.get_attribute("list") == "candidate-words"

    # Not a candidate: the browser will not send it, and says why.
    field.fill("Unicorn")
    page.get_by_role("button", name="Guess").click()
    message = field.evaluate("input => input.validationMessage")
    assert '"Unicorn" is not one of the 157 candidate words' in message
    assert not [frame for frame in sent if '"guess"' in frame]
    assert page.locator("#history .answer").count() == 0

    # A page without the check (an old tab, a script) is refused by the server with the reason.
    field.evaluate("input => input.setCustomValidity('')")
    field.evaluate("input => { input.value = 'Unicorn'; }")
    page.locator(".guess-form").evaluate("form => form.requestSubmit()")
    expect(page.locator("#move-error")).to_contain_text("not one of the 157 candidate words")
    assert page.locator("#history .answer").count() == 0

    # Narrow the word down with set questions, as in test_play_in_the_browser.
    groups = chunks(list(CANDIDATES))
    left, wrong = groups[-1], groups[0][0]
    for group in groups[:-1]:
        if ask(page, set_question(group)) == "Yes":
            left = group
            break
        wrong = group[0]
    if wrong in left:
        wrong = groups[-1][0]
    while len(left) > 2:
        half = left[: len(left) // 2]
        left = half if ask(page, set_question(half)) == "Yes" else left[len(left) // 2 :]
    asked = page.locator("#history li").count()

    # A wrong guess, in any case, is answered No and counted as a question.
    guess(page, wrong.lower())
    expect(page.locator("#history li").nth(asked)).to_contain_text(f"Is the word {wrong}?")
    expect(page.locator("#history li").nth(asked)).to_contain_text("No")
    expect(page.locator("#questions-asked")).to_have_text(str(asked + 1))
    sent_guesses = [json.loads(frame) for frame in sent if '"guess"' in frame]
    assert sent_guesses[-1]["guess"] == wrong.lower() and sent_guesses[-1]["type"] == "question"

    # The right word, typed a few letters at a time as with type-ahead, ends the game.
    for word in left:
        field = page.get_by_label("Your guess")
        field.press_sequentially(word.lower(), delay=10)
        page.get_by_role("button", name="Guess").click()
        wait_for_js(
            page,
            f"document.querySelectorAll('#history .answer').length > {asked + 1}"
            " || document.querySelector('#result') !== null",
        )
        if page.locator("#result").count():
            break
        asked += 1
    expect(page.locator("#result")).to_contain_text("You found the word")
    assert page.locator("#revealed-word").inner_text() in left
