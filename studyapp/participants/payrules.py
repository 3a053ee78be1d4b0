"""What each way of ending a study pays, and which Prolific action each ending's code needs: the
one place the rule lives, read by the pay (``Participant.settle_payment``), the pages people
read, the admin, ``manage.py prolific`` and the export.

A person's study ends one of five ways (their ``ending``): ``finished`` (every game and the
questions after), ``dropped`` (stopped, dropped by the idle policy, marked dropped by staff, or
withdrew), ``screened`` (out by a failed attention check under ``attention_failure =
"screen"``), ``lobby_timeout`` (no table formed in time) and ``failed_checks`` (the comprehension
checks, before any game). Each ending's pay is one rule of the study:

- ``full``: the whole ``payment_amount`` and the bonus rule's bonus;
- ``played``: the share of ``payment_amount`` for the games finished (games finished / rounds)
  and the bonus earned;
- ``time``: the pay for the minutes given, from consent to the end (each started minute), at
  the study's rate (``payment_amount`` over its estimated duration), at most the whole pay, and
  the bonus earned: for people who waited through no fault of theirs (a lobby that timed out);
- ``none``: nothing.

Finishing always pays ``full``; failing the comprehension checks pays ``none``; the others are
the study's ``dropped_pay``, ``screened_pay`` and ``lobby_timeout_pay``.

On Prolific each ending's code carries an action (``code_actions``), which decides how the base
is paid:

- ``approve``: the submission is approved (by ``manage.py prolific approve``, or by Prolific when
  the code is set to approve automatically) and Prolific pays the study's whole reward, so the
  rule must be ``full``; the bonus is paid as a bonus;
- ``return``: the person is asked to return the submission (Prolific pays it nothing), and what
  the rule gives is paid as a bonus (base share and bonus together);
- ``reject``: the submission is rejected and nothing is paid, so the rule must be ``none``
  (Prolific allows it for failed attention checks; say so in the consent text).

So the base is paid once: by an approval, or as a bonus, never both (``prolific pay`` checks
that a returned ending's submission was not approved after all before it pays a share).
This module imports no model: the models import it.
"""

from __future__ import annotations

from typing import Any

ENDINGS = ("finished", "dropped", "screened", "lobby_timeout", "failed_checks")
RULES = ("full", "played", "time", "none")
ACTIONS = ("approve", "return", "reject")

RULE_CHOICES = [
    ("played", "the share of the games they finished, and the bonus they earned"),
    ("time", "the pay for the minutes they gave (each started minute), and the bonus earned"),
    ("full", "the full pay and the bonus they earned, as for people who finish"),
    ("none", "nothing"),
]
DEFAULT_ACTIONS = {
    "finished": "approve",
    "dropped": "return",
    "screened": "return",
    "lobby_timeout": "return",
    "failed_checks": "return",
}


def default_actions() -> dict[str, str]:
    return dict(DEFAULT_ACTIONS)


# The study's field holding each ending's rule (finishing pays in full, failing the checks
# pays nothing: no field).
RULE_FIELDS = {
    "dropped": "dropped_pay",
    "screened": "screened_pay",
    "lobby_timeout": "lobby_timeout_pay",
}
RULE_DEFAULTS = {"dropped": "played", "screened": "none", "lobby_timeout": "time"}
CODE_FIELDS = {
    "finished": "code_finished",
    "dropped": "code_dropped",
    "screened": "code_screened",
    "lobby_timeout": "code_lobby_timeout",
    "failed_checks": "code_failed_checks",
}
# Participant statuses -> their ending (a withdrawal is a stop whose data was deleted).
STATUS_ENDINGS = {
    "finished": "finished",
    "dropped": "dropped",
    "withdrawn": "dropped",
    "screened": "screened",
    "lobby_timeout": "lobby_timeout",
    "failed_checks": "failed_checks",
}
ACTION_WORDS = {
    "approve": "approve the submission (Prolific pays the reward)",
    "return": "ask the person to return the submission (what is owed is paid as a bonus)",
    "reject": "reject the submission (nothing is paid)",
}
RULE_WORDS = {
    "full": "the full pay and the bonus earned",
    "played": "the share of the pay for the games finished, and the bonus earned",
    "time": "the pay for the minutes given (each started minute, at the study's rate: the pay "
    "over its estimated duration, at most the full pay), and the bonus earned",
    "none": "nothing",
}


def ending(status: str) -> str | None:
    return STATUS_ENDINGS.get(str(status))


def rule(study: Any, ending_: str | None) -> str:
    """The pay rule of an ending: ``full``, ``played`` or ``none``."""
    if ending_ == "finished":
        return "full"
    field = RULE_FIELDS.get(ending_ or "")
    if field is None:
        return "none"
    value = getattr(study, field, "") or RULE_DEFAULTS[ending_ or ""]
    return value if value in RULES else "none"


def action(study: Any, ending_: str | None) -> str:
    """The Prolific action an ending's code needs: ``approve``, ``return`` or ``reject``."""
    chosen = study.code_actions if isinstance(study.code_actions, dict) else {}
    return str(chosen.get(ending_ or "", DEFAULT_ACTIONS.get(ending_ or "", "return")))


def code_actions_problem(value: object) -> str:
    """Why ``value`` is not a table of code actions ('' when it is)."""
    if not isinstance(value, dict):
        return 'Code actions are a table such as { finished = "approve", dropped = "return" }.'
    for key, chosen in value.items():
        if key not in ENDINGS:
            return f"Code actions: {key!r} is not an ending (one of {', '.join(ENDINGS)})."
        if chosen not in ACTIONS:
            return f"Code actions: {key} = {chosen!r} is not one of {', '.join(ACTIONS)}."
    return ""


def problems(study: Any) -> list[tuple[str, str]]:
    """``(field, why)`` for rules and actions that contradict each other: a code whose action
    pays Prolific's whole reward (approve) for an ending that pays less, or none (reject) for one
    that pays something, or a finished code that is not approved."""
    problem = code_actions_problem(study.code_actions)
    if problem:
        return [("code_actions", problem)]
    found: list[tuple[str, str]] = []
    if action(study, "finished") != "approve":
        found.append(
            (
                "code_actions",
                "finished must be approve: people who finish are paid their reward by the "
                "approval of their submission.",
            )
        )
    for ending_ in ("dropped", "screened", "lobby_timeout", "failed_checks"):
        chosen, paid = action(study, ending_), rule(study, ending_)
        if chosen == "approve" and paid != "full":
            found.append(
                (
                    "code_actions",
                    f"{ending_} = approve pays Prolific's whole reward, but this ending pays "
                    f"{paid!r}: set {RULE_FIELDS.get(ending_, 'its pay')} to 'full', or the "
                    "action to 'return' (the share is then paid as a bonus).",
                )
            )
        if chosen == "reject" and paid != "none":
            found.append(
                (
                    "code_actions",
                    f"{ending_} = reject pays nothing, but this ending pays {paid!r}: set "
                    f"{RULE_FIELDS.get(ending_, 'its pay')} to 'none', or the action to "
                    "'return'.",
                )
            )
    return found


def table(study: Any) -> list[dict[str, str]]:
    """Every ending with its code, its Prolific action and its pay, for the docs' table, the
    admin's study page and ``study apply``'s summary."""
    rows = []
    for ending_ in ENDINGS:
        code = getattr(study, CODE_FIELDS[ending_], "")
        chosen = action(study, ending_)
        rows.append(
            {
                "ending": ending_,
                "code": code,
                "action": chosen,
                "action_words": ACTION_WORDS.get(chosen, chosen),
                "rule": rule(study, ending_),
                "rule_words": RULE_WORDS[rule(study, ending_)],
            }
        )
    return rows
