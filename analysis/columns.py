"""The columns of the games and turns frames: name, dtype and the description the export's README
prints, in one place, so the frames, the README and the CSV reader cannot drift apart."""

from __future__ import annotations

GAME_COLUMNS: dict[str, tuple[str, str]] = {
    "experiment": ("string", "experiment name, or the study of a web table"),
    "game": ("string", "twenty-questions or undercover"),
    "table": (
        "string",
        "id of the game: the web table id, or <experiment>#<line> for a JSONL file",
    ),
    "seat": ("Int64", "index of the evaluated seat"),
    "seat_slot": (
        "Int64",
        "the evaluated seat's slot in the study's design (a study draws which design slot sits "
        "at which seat per table, unless the design pins them: seat_order = fixed); empty outside "
        "studies",
    ),
    "role": ("string", "role of the evaluated seat (questioner, normal, difference, ...)"),
    "player_kind": ("string", "human, model or offline"),
    "player": ("string", "model spec, or the pseudonymous id of a participant"),
    "setting": (
        "string",
        "experience setting: none, rule-policy, experience-policy, human-policy, "
        "full-experience or cumulative; a person's games: none, or shown-policy when the study "
        "showed them a strategy text",
    ),
    "round": (
        "Int64",
        "0-based position in the player's sequence of games (t - 1 in eq. 1-2): a study's "
        "'Game 1' is round 0",
    ),
    "sample": ("Int64", "repeat index i of the sequence"),
    "case": ("Int64", "test case index"),
    "seed": ("Int64", "seed the game's config was drawn from"),
    "word": (
        "string",
        "the secret word (Twenty Questions) or the word pair 'normal / difference' (Undercover)",
    ),
    "condition": ("string", "the study condition of a participant's game; empty outside studies"),
    "oracle": ("string", "model spec of the answering seat (Twenty Questions)"),
    "rules_version": ("string", "version of the game's rules the game was played under"),
    "language": ("string", "language the game was played in, its words and rules (en, de, ...)"),
    "players": ("Int64", "seats at the game's table (Twenty Questions: 2)"),
    "opponents": (
        "string",
        "Undercover: the agents at the table's other seats, each spec with its count "
        "('offline:kb ×4'): at a study's table the seats that were not meant for people, in the "
        "model arm's game those the model did not play (in an experiment without a seat plan, "
        "every other seat); empty for Twenty Questions",
    ),
    "evaluated_role": (
        "string",
        "Undercover games of agents only: the rule that chose the scored seat: people (the role "
        "a person of the study held in that round: the model arm played as the people's twin), "
        "any (drawn uniformly), difference or normal; empty for people",
    ),
    "pilot": (
        "boolean",
        "a game of a pilot table (a pilot person's round): every seat's row is flagged, the "
        "agents' at that table too",
    ),
    "participant_status": (
        "string",
        "for a person's game in a study, how their study ended (finished, dropped, screened, "
        "lobby_timeout, or consented/playing while still taking part); empty for agents and "
        "outside studies. The analysis leaves screened and withdrawn people and pilots out of "
        "the people's curves and means unless asked (see analysis/people_left_out.csv)",
    ),
    "oracle_failed": (
        "boolean",
        "the answering seat failed during the game; such games are left out of every score",
    ),
    "taken_over": (
        "boolean",
        "a person's seat that an agent took over during the game (a missed deadline or a "
        "dropout); the game is not the person's: its reward and win are empty, and it is left "
        "out of every score",
    ),
    "taken_over_by": (
        "string",
        "the agent spec that played a taken-over seat to the end (see turns: actor_kind)",
    ),
    "stand_in_moves": (
        "Int64",
        "moves of the evaluated seat that an offline stand-in made because its model failed "
        "(see turns: stood_in_for); a game with any is won or lost with the stand-in's help, "
        "not the model's alone",
    ),
    "ended": (
        "string",
        "how the game ended: finished (played to its end), aborted (the table stopped it, e.g. "
        "when its person left and the study's dropout rule ends the game), unfinished (its "
        "person dropped out before the end: an agent took their seat and played it out, or they "
        "left while it ran), or model_failed (failed model calls ended an experiment's game); a "
        "game not finished has no reward or win and is left out of every score, its moves are "
        "in turns",
    ),
    "reward": (
        "float64",
        "NDCG@20 reward (Twenty Questions) or 1.0/0.0 for a win (Undercover) of the evaluated "
        "seat; empty for a taken-over seat (the result is the agent's, not the person's)",
    ),
    "win": (
        "boolean",
        "win of the evaluated seat; empty for Twenty Questions and for a taken-over seat",
    ),
    "questions": ("Int64", "questions the evaluated seat asked (Twenty Questions)"),
    "turns": ("Int64", "events in the game's log"),
    "calls": ("Int64", "model calls made for the game"),
    "input_tokens": ("Int64", "tokens sent to models"),
    "output_tokens": ("Int64", "tokens received from models"),
    "tokens": ("Int64", "input_tokens + output_tokens"),
    "input_chars": ("Int64", "characters sent to models"),
    "output_chars": ("Int64", "characters received from models"),
    "chars": ("Int64", "input_chars + output_chars"),
    "retries": ("Int64", "retried model calls"),
    "latency_s": ("float64", "seconds spent waiting for models"),
    "started_at": ("string", "ISO-8601 time the game started"),
    "finished_at": ("string", "ISO-8601 time the game ended"),
}

TURN_COLUMNS: dict[str, tuple[str, str]] = {
    "experiment": GAME_COLUMNS["experiment"],
    "game": GAME_COLUMNS["game"],
    "table": GAME_COLUMNS["table"],
    "player": (
        "string",
        "who made the move (see actor_kind): the participant's pseudonymous id for a person's "
        "own move, the agent spec for an agent's (also an agent that took over a person's "
        "seat); for events of the game itself and logs that do not record their actor, the "
        "player of the seat when it was evaluated (see games), else the game's evaluated player",
    ),
    "setting": GAME_COLUMNS["setting"],
    "round": GAME_COLUMNS["round"],
    "sample": GAME_COLUMNS["sample"],
    "seq": ("Int64", "0-based position of the event in the game's log"),
    "seat": ("Int64", "seat that made the move; empty for events of the game itself"),
    "seat_slot": (
        "Int64",
        "that seat's slot in the study's design (see games); empty outside studies",
    ),
    "actor_kind": (
        "string",
        "who made the move: human, model, offline, or table (the table's own events: a takeover, "
        "an abort, a do-nothing move played for a seat); empty where the log does not say. A "
        "move an offline agent made in place of a failed model is offline (see stood_in_for)",
    ),
    "stood_in_for": (
        "string",
        "for a move an offline stand-in made because the seat's model failed: that model's spec "
        "(player is then the stand-in's spec, usage_error why the model failed); else empty",
    ),
    "type": ("string", "event type: question, answer, clue, vote, abort, takeover, ..."),
    "text": (
        "string",
        "question or clue text, an explicit guess as the question that stands for it "
        "(Is the word X?); empty for a passed clue",
    ),
    "answer": ("string", "Yes, No or Invalid for an answer event"),
    "target": ("Int64", "voted seat; empty for an abstained vote"),
    "chars": ("Int64", "characters of text"),
    "created_at": ("string", "ISO-8601 time the move was committed; empty in experiment files"),
    "duration_s": (
        "float64",
        "seconds the mover took: from the previous move's commit (the view the mover was shown) "
        "to this move's commit; from the game's start for the first move",
    ),
    "calls": ("Int64", "model calls made for this move; empty for humans and offline agents"),
    "input_tokens": ("Int64", "tokens sent to the model for this move"),
    "output_tokens": ("Int64", "tokens received from the model for this move"),
    "latency_s": ("float64", "seconds spent waiting for the model for this move"),
    "usage_error": ("string", "why the model call for this move failed, if it did"),
    "event": ("string", "the whole event as JSON"),
}
