"""Whole games in real Chromium: the keyboard and labels a person uses, the socket, a reload."""

from __future__ import annotations

import re

import pytest

from games.twenty_questions import CANDIDATES
from tests.e2e.waits import wait_for_js

pytestmark = pytest.mark.e2e

SET_QUESTION_CHARS = 280


def set_question(words: list[str]) -> str:
    return "Is it one of: " + ", ".join(words) + "?"


def chunks(words: list[str]) -> list[list[str]]:
    """Split candidates into set questions short enough for the engine's length limit."""
    out: list[list[str]] = [[]]
    for word in words:
        if len(set_question([*out[-1], word])) > SET_QUESTION_CHARS:
            out.append([])
        out[-1].append(word)
    return out


def ask(page, text: str) -> str:
    answers = page.locator("#history .answer")
    before = answers.count()
    field = page.get_by_label("Your question")
    field.fill(text)
    field.press("Enter")
    wait_for_js(
        page,
        f"document.querySelectorAll('#history .answer').length > {before}"
        " || document.querySelector('#result') !== null",
    )
    if page.locator("#result").count():
        return "Yes"
    return answers.nth(before).inner_text()


def test_a_person_plays_twenty_questions_to_the_end(page) -> None:
    page.goto("/")
    page.get_by_role("button", name="Start a game").click()
    page.wait_for_url(re.compile(r"/tables/\d+/$"))
    assert ask(page, "Is it an animal?") in ("Yes", "No")

    left = list(CANDIDATES)
    groups = chunks(left)
    for group in groups[:-1]:  # find the group that holds the word
        if len(group) > 1 and ask(page, set_question(group)) == "Yes":
            left = group
            break
    else:
        left = groups[-1]
    while len(left) > 1:  # halve it
        half = left[: len(left) // 2]
        if len(half) == 1:
            break
        left = half if ask(page, set_question(half)) == "Yes" else left[len(left) // 2 :]
    for word in left:
        ask(page, f"Is the word {word}?")  # "Is it Orange?" would ask about the colour
        if page.locator("#result").count():
            break
    result = page.locator("#result")
    assert "You found the word" in result.inner_text()
    assert page.locator(".move-form").count() == 0


PROMPT = """() => {
  const board = document.querySelector('#board');
  const prompt = document.querySelector('#result') ? 'over'
    : document.querySelector('#clue-text') ? 'clue'
    : document.querySelector('#cast-vote') ? 'vote' : null;
  return prompt && [prompt, board.dataset.seq];
}"""


def wait_for_prompt(page) -> tuple[str, str]:
    """What the board asks of this seat now, read in one go (frames keep arriving)."""
    return tuple(wait_for_js(page, PROMPT))


def test_a_person_plays_undercover_with_four_agents_and_reloads(page) -> None:
    page.goto("/play/undercover/")
    page.get_by_label("How many of the 5 players should be people?").select_option("1")
    page.get_by_role("button", name="Join").click()
    page.wait_for_url(re.compile(r"/tables/\d+/$"))
    word = page.locator("#my-word").inner_text()
    clues = 0
    reloaded = False
    while (prompt := wait_for_prompt(page))[0] != "over":
        _, seq = prompt
        if prompt[0] == "clue":
            clues += 1
            field = page.get_by_label("Your clue (one sentence)")
            field.fill(f"my thought number {clues} stays hidden")
            field.press("Enter")
        else:
            page.locator(".move-form input[name=target]").first.check()
            page.get_by_role("button", name="Vote").click()
        wait_for_js(page, f"document.querySelector('#board').dataset.seq !== '{seq}'")
        if clues == 1 and not reloaded:
            page.reload()
            reloaded = True
            assert page.locator("#my-word").inner_text() == word
            assert "my thought number 1 stays hidden" in page.locator("#clues").inner_text()
    assert reloaded and clues >= 1
    assert re.search(r"You (won|lost)", page.locator("#result").inner_text())


# Holds every WebSocket of the page in its "connecting" state until ``openSockets()``: the real
# socket connects underneath, but the page sees neither its open event nor its frames until then.
HOLD_SOCKETS = """(() => {
  const Real = window.WebSocket;
  const readyState = Object.getOwnPropertyDescriptor(Real.prototype, 'readyState').get;
  let held = true;
  const waiting = [];
  window.openSockets = () => { held = false; waiting.splice(0).forEach((run) => run()); };
  const later = (run) => (held ? waiting.push(run) : run());
  window.WebSocket = function (url, protocols) {
    const socket = new Real(url, protocols);
    const listen = socket.addEventListener.bind(socket);
    socket.addEventListener = (type, handler, options) =>
      listen(type, (event) => later(() => handler.call(socket, event)), options);
    for (const name of ['onopen', 'onmessage', 'onclose', 'onerror']) {
      let handler = null;
      Object.defineProperty(socket, name, { get: () => handler, set: (h) => { handler = h; } });
      listen(name.slice(2), (event) => later(() => handler && handler.call(socket, event)));
    }
    Object.defineProperty(socket, 'readyState', {
      get: () => (held ? Real.CONNECTING : readyState.call(socket)),
    });
    return socket;
  };
  Object.assign(window.WebSocket, Real);
  window.WebSocket.prototype = Real.prototype;
})()"""


def test_it_keeps_a_move_sent_before_the_socket_opens(page) -> None:
    from playwright.sync_api import expect

    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    page.add_init_script(HOLD_SOCKETS)
    page.goto("/")
    page.get_by_role("button", name="Start a game").click()
    page.wait_for_url(re.compile(r"/tables/\d+/$"))
    table_url = page.url
    field = page.get_by_label("Your question")
    field.fill("Is it an animal?")
    field.press("Enter")  # before the socket is open: the move is held, visibly
    page.get_by_role("button", name="Ask").click()  # an impatient second try sends nothing twice
    expect(page.locator("#socket-status")).to_contain_text("your move will be sent")
    page.wait_for_timeout(300)
    assert sent == [] and page.url == table_url  # neither over the socket nor as a page POST
    expect(field).to_have_value("Is it an animal?")

    page.evaluate("openSockets()")  # the move goes as soon as the socket opens
    expect(page.locator("#history .answer")).to_have_count(1)
    assert "Is it an animal?" in page.locator("#history").inner_text()
    expect(page.locator("#socket-status")).to_be_hidden()
    page.wait_for_timeout(500)
    assert page.locator("#history .question").all_inner_texts() == ["Is it an animal?"]
