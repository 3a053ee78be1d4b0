"""The rules of Twenty Questions as a pure fold over events, so any process can rebuild a game
from its log.

The engine itself resolves guesses. Under rules version 2 (:data:`RULES_VERSION`) a question is a
guess when it asks whether the secret word is one candidate and nothing more ("Is it a dog?",
"My guess is dog"; :mod:`games.twenty_questions.guesses` has the grammar), or when it is the
explicit move ``{"type": "question", "seat": 0, "guess": word}``. Names are read as whole words,
case-insensitive, longest match first, common aliases and plurals included
(:mod:`games.twenty_questions.names`). The right word ends
the game; a wrong one counts as a question and is answered "No" by the engine, so a careless
oracle cannot spoil the reward. Everything else, including questions that mention candidates in
other roles ("Can you watch it?") or name two of them, waits for the oracle's Yes, No or Invalid.
Configs without ``rules_version`` are version 1, under which any question naming exactly one
candidate was a guess; their logs replay as they were played.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from games import languages
from games.base import Config, Engine, Event, IllegalMove, Observation
from games.twenty_questions import CANDIDATES, MAX_QUESTIONS, ndcg_reward
from games.twenty_questions.names import (
    guess_of,
    guess_text,
    guess_word,
    named_candidates,
    named_in,
)
from games.twenty_questions.rules import ANSWERS, INVALID, NO, YES

QUESTIONER, ORACLE = 0, 1
ROLES = ("questioner", "oracle")
MAX_QUESTION_CHARS = 300
# The questioner's fallback move: recorded as a question and answered Invalid by the engine.
NO_QUESTION = "(no question)"
# The version of these rules, written into every new config. "1": any question naming exactly one
# candidate was a guess. "2": a question is a guess only when it asks whether the word is that
# candidate (:mod:`games.twenty_questions.guesses`), and a guess can be made explicitly. A config
# without a version is from before versions were kept: "1".
RULES_VERSION = "2"
RULES_VERSIONS = ("1", "2")


@dataclass(frozen=True, slots=True)
class Turn:
    """One question and its answer; ``answer`` is None while the oracle has not replied.
    ``by`` says who answered ("oracle" or "engine"); ``guess`` is the one candidate named, if any."""

    question: str
    answer: str | None = None
    by: str | None = None
    guess: str | None = None


@dataclass(frozen=True, slots=True)
class State:
    answer: str
    max_questions: int
    turns: tuple[Turn, ...] = ()
    found_at: int | None = None
    aborted: str | None = None
    rules_version: str = RULES_VERSION
    # Questions withdrawn because the oracle could not answer (``void``): in all, in a row since
    # the oracle last answered, and whether the questioner's last question was one of them.
    voids: int = 0
    void_streak: int = 0
    voided: bool = False
    # The table's language: another one shows the candidates by their names in it and reads a
    # guess written with them (games.languages); the answer stays the canonical candidate.
    language: str = "en"

    @property
    def pending(self) -> bool:
        return bool(self.turns) and self.turns[-1].answer is None

    @property
    def over(self) -> bool:
        if self.found_at is not None or self.aborted is not None:
            return True
        return len(self.turns) >= self.max_questions and not self.pending


def _check_config(config: Config) -> tuple[str, int, str]:
    answer = config.get("answer")
    if answer not in CANDIDATES:
        raise ValueError(f"config answer {answer!r} is not one of the {len(CANDIDATES)} candidates")
    limit = config.get("max_questions", MAX_QUESTIONS)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"max_questions must be a positive integer, got {limit!r}")
    version = config.get("rules_version", "1")
    if version not in RULES_VERSIONS:
        raise ValueError(f"unknown rules_version {version!r}; known: {', '.join(RULES_VERSIONS)}")
    if config.get("language", "en") not in languages.LANGUAGES:
        raise ValueError(f"unknown language {config.get('language')!r}")
    return answer, limit, version


class TwentyQuestionsEngine(Engine[State]):
    name = "twenty-questions"

    def new_config(self, seed: int, **options: Any) -> Config:
        """``answer`` (a candidate, any case) may be given; otherwise the seed picks one.
        ``rules_version`` defaults to the current :data:`RULES_VERSION`."""
        answer = options.pop("answer", None)
        max_questions = options.pop("max_questions", MAX_QUESTIONS)
        rules_version = options.pop("rules_version", RULES_VERSION)
        language = options.pop("language", "en")
        if options:
            raise ValueError(f"unknown twenty-questions options: {', '.join(sorted(options))}")
        if answer is None:
            answer = random.Random(seed).choice(CANDIDATES)
        else:
            spelled = {word.lower(): word for word in CANDIDATES}
            answer = spelled.get(str(answer).strip().lower(), answer)
        config = {"answer": answer, "max_questions": max_questions, "rules_version": rules_version}
        if language != "en":  # English configs stay as they were
            config["language"] = language
        _check_config(config)
        return config

    def initial(self, config: Config) -> State:
        answer, limit, version = _check_config(config)
        language = config.get("language", "en")
        return State(answer=answer, max_questions=limit, rules_version=version, language=language)

    def seats(self, config: Config) -> list[str]:
        return list(ROLES)

    def to_move(self, state: State) -> list[int]:
        if state.over:
            return []
        return [ORACLE] if state.pending else [QUESTIONER]

    def apply(self, state: State, event: Event) -> State:
        kind = event.get("type")
        if kind == "takeover":
            if event.get("seat") not in (QUESTIONER, ORACLE):
                raise IllegalMove("takeover needs the seat that changes hands: 0 or 1")
            return state
        if kind == "resume":  # staff resumed a table paused after oracle failures; no rule effect
            return state
        if state.over:
            raise IllegalMove("the game is over")
        if kind == "abort":
            return replace(state, aborted=str(event.get("reason") or "aborted"))
        if kind == "question":
            return self._question(state, event)
        if kind == "answer":
            return self._answer(state, event)
        if kind == "void":
            return self._void(state, event)
        raise IllegalMove(f"unknown event type {kind!r}; expected 'question' or 'answer'")

    def _question(self, state: State, event: Event) -> State:
        if event.get("seat") != QUESTIONER:
            raise IllegalMove("only the questioner (seat 0) asks questions")
        if state.pending:
            raise IllegalMove("it is the oracle's turn to answer the last question")
        if event.get("guess") is not None:
            return self._explicit_guess(state, event)
        text = event.get("text")
        if not isinstance(text, str) or not text.strip():
            raise IllegalMove("the question is empty; ask a yes/no question")
        text = text.strip()
        if len(text) > MAX_QUESTION_CHARS:
            raise IllegalMove(
                f"the question is {len(text)} characters long; the limit is {MAX_QUESTION_CHARS}"
            )
        state = replace(state, voided=False)
        if text == NO_QUESTION:
            return replace(state, turns=(*state.turns, Turn(text, INVALID, "engine")))
        if state.language != "en":
            named = named_in(text, state.language)
            guess = named[0] if len(named) == 1 else None
        elif state.rules_version == "1":
            named = named_candidates(text)
            guess = named[0] if len(named) == 1 else None
        else:
            guess = guess_of(text)
        if guess is None:
            return replace(state, turns=(*state.turns, Turn(text)))
        return self._resolve(state, text, guess)

    def _explicit_guess(self, state: State, event: Event) -> State:
        """``{"type": "question", "seat": 0, "guess": word}``: a guess whatever the phrasing,
        recorded as the question :func:`guess_text` gives."""
        if state.rules_version == "1":
            raise IllegalMove("explicit guesses came with rules version 2; ask a question")
        if str(event.get("text") or "").strip():
            raise IllegalMove("send either a question's text or a guess, not both")
        word = guess_word(event["guess"])
        if state.language != "en":
            word = languages.candidate_of(str(event["guess"]), state.language) or word
        if word is None:
            shown = str(event["guess"]).strip()[:60]
            raise IllegalMove(
                f'"{shown}" is not one of the {len(CANDIDATES)} candidate words; '
                "pick a word from the list"
            )
        text = guess_text(word)
        if state.language != "en":  # the board and the transcript read the table's language
            text = languages.guess_text(
                languages.candidate_names(state.language)[word], state.language
            )
        return self._resolve(replace(state, voided=False), text, word)

    def _resolve(self, state: State, text: str, guess: str) -> State:
        """A guess is answered by the engine: the right word ends the game, any other gets No."""
        if guess == state.answer:
            turn = Turn(text, YES, "engine", guess)
            return replace(state, turns=(*state.turns, turn), found_at=len(state.turns) + 1)
        return replace(state, turns=(*state.turns, Turn(text, NO, "engine", guess)))

    def _answer(self, state: State, event: Event) -> State:
        if event.get("seat") != ORACLE:
            raise IllegalMove("only the oracle (seat 1) answers questions")
        if not state.pending:
            raise IllegalMove("there is no question waiting for an answer")
        answer = event.get("answer")
        if answer not in ANSWERS:
            raise IllegalMove(f"the answer must be one of {', '.join(ANSWERS)}; got {answer!r}")
        last = replace(state.turns[-1], answer=answer, by="oracle")
        return replace(state, turns=(*state.turns[:-1], last), void_streak=0, voided=False)

    def _void(self, state: State, event: Event) -> State:
        """The oracle could not answer (its model failed): the pending question is withdrawn,
        not counted, and the questioner asks again."""
        if event.get("seat") != ORACLE:
            raise IllegalMove("only the oracle (seat 1) can withdraw a question it cannot answer")
        if not state.pending:
            raise IllegalMove("there is no question waiting for an answer")
        if not isinstance(event.get("reason"), str):
            raise IllegalMove("a void needs the reason the oracle could not answer")
        return replace(
            state,
            turns=state.turns[:-1],
            voids=state.voids + 1,
            void_streak=state.void_streak + 1,
            voided=True,
        )

    def legal_actions(self, state: State, seat: int) -> list[dict[str, Any]]:
        if seat not in self.to_move(state):
            return []
        if seat == QUESTIONER:
            return [{"type": "question", "max_chars": MAX_QUESTION_CHARS}]
        return [{"type": "answer", "answers": list(ANSWERS)}]

    def observe(self, state: State, seat: int) -> Observation:
        """The questioner sees the dialogue; only the oracle sees the answer word."""
        if seat not in (QUESTIONER, ORACLE):
            raise ValueError(f"twenty-questions has seats 0 and 1, not {seat!r}")
        history = [
            {"question": t.question, "answer": t.answer, "by": t.by, "guess": t.guess}
            for t in state.turns
            if t.answer is not None
        ]
        observation: Observation = {
            "game": self.name,
            "seat": seat,
            "role": ROLES[seat],
            "candidates": list(languages.candidate_names(state.language).values()),
            "max_questions": state.max_questions,
            "questions_asked": len(state.turns),
            "history": history,
            "your_turn": seat in self.to_move(state),
            "over": state.over,
            "voided": state.voided,
            # the question waiting for its answer (the questioner's own; the oracle's to answer)
            "pending": state.turns[-1].question if state.pending else None,
        }
        if seat == ORACLE:
            # A model oracle at a table in another language reads the word as the questions
            # name it (the state keeps the canonical candidate).
            observation["answer"] = languages.candidate_names(state.language)[state.answer]
            observation["question"] = state.turns[-1].question if state.pending else None
        if state.over:
            observation["found"] = state.found_at is not None
            observation["reward"] = ndcg_reward(state.found_at)
        return observation

    def is_over(self, state: State) -> bool:
        return state.over

    def outcome(self, state: State) -> dict[int, dict[str, Any]]:
        """The oracle cooperates, so both seats share the questioner's reward."""
        result = {
            "reward": ndcg_reward(state.found_at),
            "win": None,
            "found": state.found_at is not None,
            "questions": len(state.turns),
            "aborted": state.aborted is not None,
            "voids": state.voids,
        }
        return {QUESTIONER: dict(result), ORACLE: dict(result)}

    def fallback(self, state: State, seat: int) -> Event:
        if seat == QUESTIONER:
            return {"type": "question", "seat": QUESTIONER, "text": NO_QUESTION}
        return {"type": "answer", "seat": ORACLE, "answer": INVALID}

    def failed(self, state: State, seat: int, reason: str) -> Event:
        """An oracle whose model failed withdraws the question, so it costs the questioner nothing."""
        if seat == ORACLE and state.pending and not state.over:
            return {"type": "void", "seat": ORACLE, "reason": reason}
        return self.fallback(state, seat)

    def failures_in_a_row(self, events: Sequence[Event]) -> int:
        """Questions withdrawn (``void``) since the oracle last answered or staff resumed."""
        count = 0
        for event in reversed(events):
            if event["type"] in ("answer", "resume"):
                break
            count += event["type"] == "void"
        return count

    def state_to_json(self, state: State) -> dict[str, Any]:
        return {
            "answer": state.answer,
            "max_questions": state.max_questions,
            "turns": [
                {"question": t.question, "answer": t.answer, "by": t.by, "guess": t.guess}
                for t in state.turns
            ],
            "found_at": state.found_at,
            "aborted": state.aborted,
            "rules_version": state.rules_version,
            "voids": state.voids,
            "void_streak": state.void_streak,
            "voided": state.voided,
        }

    def state_from_json(self, data: dict[str, Any]) -> State:
        return State(
            answer=data["answer"],
            max_questions=data["max_questions"],
            turns=tuple(Turn(**turn) for turn in data["turns"]),
            found_at=data["found_at"],
            aborted=data["aborted"],
            rules_version=data.get("rules_version", "1"),
            voids=data.get("voids", 0),
            void_streak=data.get("void_streak", 0),
            voided=data.get("voided", False),
        )


ENGINE = TwentyQuestionsEngine()
