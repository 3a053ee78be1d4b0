"""A responder for :class:`tests.fakes.llm_server.FakeLLMServer` that plays both games legally, so
tests can run whole games with LLM seats against the fake server.

It recognises each prompt of ``games/llm/prompts`` by a phrase in it and answers deterministically:

- questioner: alternates a plain question with a guess, walking the candidate list in order;
- oracle: always "No";
- speaker: a clue unique to the seat and round (never repeats, never says the word);
- voter: the lowest-numbered other player still in the game;
- reflection / policy: a fixed text; curator: ``Memory vN`` where N is one more than the version
  found in the current memory, so tests can follow the memory from game to game.

Usage: ``FakeLLMServer(GameResponder())``; ``responder.kinds`` counts the prompts seen by kind.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from typing import Any

from games.twenty_questions import CANDIDATES
from tests.fakes.llm_server import last_user_text, prompt_text

_SEAT = re.compile(r"You are player (\d+)\.")
_ALIVE = re.compile(r"Players still in the game: ([\d, ]+)\.")
_VERSION = re.compile(r"Memory v(\d+)")
_QUESTION_NO = re.compile(r"This will be question (\d+) of")


class GameResponder:
    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self._lock = threading.Lock()

    def kind(self, body: dict[str, Any]) -> str:
        text = prompt_text(body)
        last = last_user_text(body)
        if "You keep a memory of strategies" in last:
            return "curator"
        if "Look back at this game" in last:
            return "reflection"
        if "You have not played this game yet" in last:
            return "rule-policy"
        if "From the rules and these games" in last:
            return "experience-policy"
        if "You are the host of a game of Twenty Questions" in text:
            return "oracle"
        if "It is time to vote" in text:
            return "voter"
        if "Who is the Difference" in text or "Who is Undercover" in text:  # either role naming
            return "speaker"
        return "questioner"

    def __call__(self, body: dict[str, Any]) -> str:
        kind = self.kind(body)
        with self._lock:
            self.kinds[kind] += 1
        text = prompt_text(body)
        if kind == "curator":
            match = _VERSION.search(last_user_text(body))
            version = int(match.group(1)) + 1 if match else 1
            return f"Keeping the lessons. <answer>Memory v{version}</answer>"
        if kind == "reflection":
            return "<answer>I should split the candidates more evenly.</answer>"
        if kind in ("rule-policy", "experience-policy"):
            return f"<answer>Policy from {kind}: ask broad questions first.</answer>"
        if kind == "oracle":
            return "It does not fit. <answer>No</answer>"
        if kind == "voter":
            seat = int(_SEAT.findall(text)[-1])
            alive = [int(s) for s in _ALIVE.findall(text)[-1].split(",")]
            return f"<answer>{min(s for s in alive if s != seat)}</answer>"
        if kind == "speaker":
            seat = int(_SEAT.findall(text)[-1])
            count = text.count(f"  player {seat}: ") + 1
            return f"<answer>Clue {count} from seat {seat}: it is something people know.</answer>"
        numbers = _QUESTION_NO.findall(text)
        number = int(numbers[-1]) if numbers else 1
        if number % 2:
            return f"<answer>Is it bigger than a shoebox (question {number})?</answer>"
        return f"<answer>Is it a {CANDIDATES[number // 2 - 1]}?</answer>"
