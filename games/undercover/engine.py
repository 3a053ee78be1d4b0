"""The rules of Who is Undercover as a pure fold over events, so any process can rebuild a table.

One seat (the "difference") holds a word related to, but not the same as, everyone else's. Three
speaking rounds come first, then a vote; after that one speaking round and one vote alternate. The
most-voted seat is out and a tie removes no one. The normal seats win when the difference is voted
out; the difference wins once three or fewer seats remain, or when the cap on vote rounds is hit.

Nothing a player reads names a role other than "difference" and "normal", and a seat learns its own
role only when the game is over.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from games.base import Config, Engine, Event, IllegalMove, Observation
from games.undercover.repeats import normalise, said_again
from games.undercover.words import PAIRS

FIRST_SPEAKING_ROUNDS = 3
MIN_PLAYERS, MAX_PLAYERS = 4, 8
DEFAULT_MAX_VOTE_ROUNDS = 6
MAX_CLUE_CHARS = 300
# Version 2: a clue that says an earlier one again in other words is refused as a repeat too
# (games.undercover.repeats); a config without ``rules_version`` (a game logged before) is 1.
RULES_VERSION = "2"
RULES_VERSIONS = ("1", "2")

Ballot = tuple[int, int | None]


@dataclass(frozen=True, slots=True)
class State:
    """Everything the rules need. Frozen and built from tuples, so old states can be shared."""

    config: Config
    alive: tuple[int, ...]
    phase: str  # "speak", "vote" or "over"
    speaking_round: int  # 1-based number of the current (or latest) speaking round
    rounds_left: int  # speaking rounds before the next vote, the current one included
    turn: int  # index into ``alive`` of the next speaker
    clues: tuple[tuple[int, int, str | None], ...]  # (speaking round, seat, text or None)
    said: frozenset[str]  # normalised text of every clue so far, for the repeat check
    ballots: tuple[Ballot, ...]  # votes cast in the open vote round, hidden from players
    vote_rounds: tuple[tuple[tuple[Ballot, ...], int | None], ...]  # (ballots, eliminated)
    winner: str | None = None  # "normal", "difference", or None (aborted or not over)
    end: str | None = None  # "voted_out", "three_left", "vote_cap" or "abort"


# ---- clue checks --------------------------------------------------------------------------------

_LETTER_WORDS = re.compile(
    r"\b(letters?|spell(s|ed|ing)?|spelt|rhym(e|es|ed|ing)|syllables?|vowels?|consonants?"
    r"|initials?|alphabet\w*|(starts?|starting|begins?|beginning|ends?|ending) with)\b"
)
_QUOTED_LETTER = re.compile(
    r"(?<![a-z])[\"'\u2018\u2019\u201c\u201d`]\s*[a-z]\s*[\"'\u2018\u2019\u201c\u201d`](?![a-z])"
)


@lru_cache(maxsize=1024)
def word_forms(word: str) -> tuple[str, ...]:
    """The normalised spellings that count as saying ``word``: plural, possessive, run together."""
    base = normalise(word)
    forms = {base, base + "s", base + "es"}
    if base.endswith("y"):
        forms.add(base[:-1] + "ies")
    forms |= {form.replace(" ", "") for form in list(forms)}
    return tuple(sorted(forms))


def clue_problem(
    text: str, word: str, said: frozenset[str], earlier: tuple[str, ...] = ()
) -> str | None:
    """Why ``text`` is not an allowed clue for a seat holding ``word``, or None if it is.
    ``said``: the earlier clues normalised (the same text again is a repeat); ``earlier``: the
    earlier clues, given under rules version 2, where one said again in other words is too."""
    plain = normalise(text)
    if not plain:
        return "a clue must contain words; send null to pass"
    if len(text) > MAX_CLUE_CHARS:
        return f"a clue is one sentence of at most {MAX_CLUE_CHARS} characters"
    padded = f" {plain} "
    if any(f" {form} " in padded for form in word_forms(word)):
        return "a clue must not say your own word"
    lowered = text.lower()
    if _LETTER_WORDS.search(lowered) or _QUOTED_LETTER.search(lowered):
        return "a clue must not hint at letters, spelling or rhymes; describe the meaning"
    if plain in said:
        return "that clue was already given; say something new"
    if earlier and said_again(text, earlier):
        return "that clue was already given in other words; say something new"
    return None


# ---- the engine ---------------------------------------------------------------------------------


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class UndercoverEngine(Engine[State]):
    """Who is Undercover (called "Who is the Difference" in front of players)."""

    name = "undercover"

    def new_config(
        self,
        seed: int,
        players: int = 5,
        pair: tuple[str, str] | list[str] | None = None,
        max_vote_rounds: int = DEFAULT_MAX_VOTE_ROUNDS,
        rules_version: str = RULES_VERSION,
    ) -> Config:
        """Pick the word pair, which of its words the difference holds, and the difference seat."""
        if not _int(players) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {players!r}")
        rng = random.Random(seed)
        first, second = pair if pair is not None else rng.choice(PAIRS)
        if rng.random() < 0.5:
            first, second = second, first
        config = {
            "players": players,
            "normal_word": first,
            "difference_word": second,
            "difference_seat": rng.randrange(players),
            "max_vote_rounds": max_vote_rounds,
            "rules_version": rules_version,
        }
        self.initial(config)  # checks the pair and the cap
        return config

    def initial(self, config: Config) -> State:
        players = config["players"]
        if not _int(players) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise ValueError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {players!r}")
        if not 0 <= config["difference_seat"] < players:
            raise ValueError("difference_seat must be a seat index")
        if normalise(config["normal_word"]) == normalise(config["difference_word"]):
            raise ValueError("the two words of a pair must differ")
        if not _int(config["max_vote_rounds"]) or config["max_vote_rounds"] < 1:
            raise ValueError("max_vote_rounds must be a positive integer")
        version = config.get("rules_version", "1")
        if version not in RULES_VERSIONS:
            raise ValueError(
                f"unknown rules_version {version!r}; known: {', '.join(RULES_VERSIONS)}"
            )
        return State(
            config=config,
            alive=tuple(range(players)),
            phase="speak",
            speaking_round=1,
            rounds_left=FIRST_SPEAKING_ROUNDS,
            turn=0,
            clues=(),
            said=frozenset(),
            ballots=(),
            vote_rounds=(),
        )

    def seats(self, config: Config) -> list[str]:
        return ["player"] * config["players"]

    def word(self, config: Config, seat: int) -> str:
        """The secret word of ``seat``."""
        if seat == config["difference_seat"]:
            return config["difference_word"]
        return config["normal_word"]

    def role(self, config: Config, seat: int) -> str:
        """ "difference" or "normal"; players only read it once the game is over."""
        return "difference" if seat == config["difference_seat"] else "normal"

    # ---- apply ----------------------------------------------------------------------------------

    def apply(self, state: State, event: Event) -> State:
        kind = event.get("type") if isinstance(event, dict) else None
        if state.phase == "over":
            raise IllegalMove("the game is over")
        if kind == "abort":
            return replace(state, phase="over", end="abort", winner=None, ballots=())
        seat = event.get("seat") if isinstance(event, dict) else None
        if not _int(seat) or not 0 <= seat < state.config["players"]:
            raise IllegalMove(f"there is no seat {seat!r}")
        if kind == "takeover":
            return state
        if kind == "clue":
            return self._clue(state, seat, event.get("text"))
        if kind == "vote":
            return self._vote(state, seat, event.get("target"))
        raise IllegalMove(f"unknown event type {kind!r}; send a clue or a vote")

    def _clue(self, state: State, seat: int, text: Any) -> State:
        if state.phase != "speak":
            raise IllegalMove("it is time to vote, not to give a clue")
        if seat not in state.alive:
            raise IllegalMove(f"seat {seat} is out of the game")
        speaker = state.alive[state.turn]
        if seat != speaker:
            raise IllegalMove(f"it is seat {speaker}'s turn to speak")
        said = state.said
        if text is not None:
            if not isinstance(text, str):
                raise IllegalMove("a clue must be text, or null to pass")
            earlier = ()
            if state.config.get("rules_version", "1") != "1":
                earlier = tuple(clue for _, _, clue in state.clues if clue is not None)
            problem = clue_problem(text, self.word(state.config, seat), said, earlier)
            if problem:
                raise IllegalMove(problem)
            said = said | {normalise(text)}
        clues = (*state.clues, (state.speaking_round, seat, text))
        turn = state.turn + 1
        if turn < len(state.alive):
            return replace(state, clues=clues, said=said, turn=turn)
        if state.rounds_left > 1:
            return replace(
                state,
                clues=clues,
                said=said,
                turn=0,
                speaking_round=state.speaking_round + 1,
                rounds_left=state.rounds_left - 1,
            )
        return replace(state, clues=clues, said=said, turn=0, rounds_left=0, phase="vote")

    def _vote(self, state: State, seat: int, target: Any) -> State:
        if state.phase != "vote":
            raise IllegalMove("it is time to give a clue; the vote comes after the speaking round")
        if seat not in state.alive:
            raise IllegalMove(f"seat {seat} is out of the game")
        if any(voter == seat for voter, _ in state.ballots):
            raise IllegalMove(f"seat {seat} has already voted this round")
        if target is not None:
            if not _int(target) or not 0 <= target < state.config["players"]:
                raise IllegalMove(f"there is no seat {target!r} to vote for")
            if target == seat:
                raise IllegalMove("you cannot vote for yourself")
            if target not in state.alive:
                raise IllegalMove(f"seat {target} is already out of the game")
        ballots = (*state.ballots, (seat, target))
        if len(ballots) < len(state.alive):
            return replace(state, ballots=ballots)
        return self._resolve(state, ballots)

    def _resolve(self, state: State, ballots: tuple[Ballot, ...]) -> State:
        counts = Counter(target for _, target in ballots if target is not None)
        eliminated = None
        if counts:
            top = max(counts.values())
            leaders = [seat for seat, count in counts.items() if count == top]
            if len(leaders) == 1:
                eliminated = leaders[0]
        alive = tuple(seat for seat in state.alive if seat != eliminated)
        vote_rounds = (*state.vote_rounds, (ballots, eliminated))
        done = replace(state, alive=alive, ballots=(), vote_rounds=vote_rounds, phase="over")
        if eliminated is not None and eliminated == state.config["difference_seat"]:
            return replace(done, winner="normal", end="voted_out")
        if len(alive) <= 3:
            return replace(done, winner="difference", end="three_left")
        if len(vote_rounds) >= state.config["max_vote_rounds"]:
            return replace(done, winner="difference", end="vote_cap")
        return replace(
            done, phase="speak", speaking_round=state.speaking_round + 1, rounds_left=1, turn=0
        )

    # ---- queries --------------------------------------------------------------------------------

    def to_move(self, state: State) -> list[int]:
        if state.phase == "speak":
            return [state.alive[state.turn]]
        if state.phase == "vote":
            voted = {voter for voter, _ in state.ballots}
            return [seat for seat in state.alive if seat not in voted]
        return []

    def legal_actions(self, state: State, seat: int) -> list[dict[str, Any]]:
        if seat not in self.to_move(state):
            return []
        if state.phase == "speak":
            return [{"type": "clue", "text": "one sentence about your word, or null to pass"}]
        targets = [other for other in state.alive if other != seat]
        return [{"type": "vote", "targets": targets, "abstain": True}]

    def observe(self, state: State, seat: int) -> Observation:
        """The seat's own word, every clue, resolved votes; never another word or any role."""
        own_ballot = next((target for voter, target in state.ballots if voter == seat), None)
        # No "game" key: the name "undercover" must not reach a player (see the module docstring).
        observation: Observation = {
            "seat": seat,
            "players": state.config["players"],
            "word": self.word(state.config, seat),
            "phase": state.phase,
            "alive": list(state.alive),
            "speaking_round": state.speaking_round,
            "vote_round": len(state.vote_rounds) + (1 if state.phase == "vote" else 0),
            "max_vote_rounds": state.config["max_vote_rounds"],
            "clues": [
                {"round": rnd, "seat": speaker, "text": text} for rnd, speaker, text in state.clues
            ],
            "votes": [
                {
                    "round": number,
                    "ballots": [{"seat": voter, "target": target} for voter, target in ballots],
                    "eliminated": eliminated,
                }
                for number, (ballots, eliminated) in enumerate(state.vote_rounds, start=1)
            ],
            "voted": any(voter == seat for voter, _ in state.ballots),
            "my_vote": own_ballot,
            "to_move": seat in self.to_move(state),
            "legal_actions": self.legal_actions(state, seat),
        }
        if state.phase == "over":
            role = self.role(state.config, seat)
            observation["result"] = {
                "role": role,
                "win": state.winner == role,
                "end": state.end,
            }
        return observation

    def is_over(self, state: State) -> bool:
        return state.phase == "over"

    def outcome(self, state: State) -> dict[int, dict[str, Any]]:
        if state.phase != "over":
            raise ValueError("the game is not over yet")
        result = {}
        for seat in range(state.config["players"]):
            role = self.role(state.config, seat)
            win = state.winner == role
            result[seat] = {
                "reward": 1.0 if win else 0.0,
                "win": win,
                "role": role,
                "word": self.word(state.config, seat),
                "alive": seat in state.alive,
                "winner": state.winner,
                "end": state.end,
                "vote_rounds": len(state.vote_rounds),
            }
        return result

    def fallback(self, state: State, seat: int) -> Event:
        if state.phase == "vote":
            return {"type": "vote", "seat": seat, "target": None}
        return {"type": "clue", "seat": seat, "text": None}

    # ---- JSON ---------------------------------------------------------------------------------

    def state_to_json(self, state: State) -> dict[str, Any]:
        return {
            "config": state.config,
            "alive": list(state.alive),
            "phase": state.phase,
            "speaking_round": state.speaking_round,
            "rounds_left": state.rounds_left,
            "turn": state.turn,
            "clues": [list(clue) for clue in state.clues],
            "ballots": [list(ballot) for ballot in state.ballots],
            "vote_rounds": [
                {"ballots": [list(b) for b in ballots], "eliminated": eliminated}
                for ballots, eliminated in state.vote_rounds
            ],
            "winner": state.winner,
            "end": state.end,
        }

    def state_from_json(self, data: dict[str, Any]) -> State:
        clues = tuple((rnd, seat, text) for rnd, seat, text in data["clues"])
        return State(
            config=data["config"],
            alive=tuple(data["alive"]),
            phase=data["phase"],
            speaking_round=data["speaking_round"],
            rounds_left=data["rounds_left"],
            turn=data["turn"],
            clues=clues,
            said=frozenset(normalise(text) for _, _, text in clues if text is not None),
            ballots=tuple((seat, target) for seat, target in data["ballots"]),
            vote_rounds=tuple(
                (tuple((s, t) for s, t in vr["ballots"]), vr["eliminated"])
                for vr in data["vote_rounds"]
            ),
            winner=data["winner"],
            end=data["end"],
        )


ENGINE = UndercoverEngine()
