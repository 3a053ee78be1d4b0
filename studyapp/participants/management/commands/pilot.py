"""``manage.py pilot SLUG --participants N [--base URL]``: bots take the study end to end.

The bots go through the served site (``make run``, or the production topology) exactly as people
would, flagged as pilots by a signed token only staff can make (studyapp.participants.pilots).
Afterwards the command reads what the site recorded for them and prints one JSON report: each
bot's path (status, condition, rounds, code, payment) and each table (status, who sat where), with
the checks a pilot is for: every table finished by the rules, people and agents at the same
tables, conditions in balance, every person's consent time, condition, rounds, code and payment.
The command uses this project's settings, so run it against a site that shares its database and
SECRET_KEY (or pass ``--token`` from one that does).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
from collections import Counter
from decimal import Decimal
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from tqdm import tqdm

from studyapp.db import TRANSIENT
from studyapp.participants import outcomes, pilots, questionnaire, steps, table_study
from studyapp.participants.models import Participant, Study
from studyapp.participants.pilot_bot import BotResult, run_bots
from studyapp.retry import retry
from studyapp.tables import services
from studyapp.tables.models import Table


class Command(BaseCommand):
    help = "Play N simulated participants through a study's real link against a running site."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--participants", type=int, default=4)
        parser.add_argument("--base", default="http://127.0.0.1:8000")
        parser.add_argument("--token", default="", help="a pilot token (default: made here)")
        parser.add_argument(
            "--quiet", action="store_true", help="no progress bar on stderr (for scripts)"
        )
        parser.add_argument(
            "--fail-attention",
            type=int,
            default=0,
            metavar="N",
            help="the first N bots miss the questionnaire's attention checks on purpose (the "
            "others answer them as expected), to rehearse the study's attention policy",
        )
        parser.add_argument(
            "--idle-once",
            type=int,
            default=0,
            metavar="N",
            help="the last N bots let their first turn with a deadline pass, as a person who "
            "looked away once: the study must keep them (the turn passed, the seat theirs) and "
            "see them finish",
        )
        parser.add_argument(
            "--prefix",
            default="",
            help="start of the bots' Prolific IDs (default: PILOT and a fresh run id, so a second "
            "pilot of the same study plays anew instead of rejoining the first run's bots)",
        )

    def handle(self, *args: object, **options: Any) -> None:
        study = Study.objects.filter(slug=options["slug"]).first()
        if study is None:
            raise CommandError(f"no study {options['slug']!r}")
        if options["participants"] < 1:
            raise CommandError("--participants must be 1 or more")
        answers = [check["answer"] for check in steps.study_checks(study)]
        token = options["token"] or pilots.pilot_token(study.slug)
        # Rounds the bots finished, on stderr: stdout stays the JSON report alone.
        total = options["participants"] * study.rounds
        with tqdm(total=total, desc="pilot", unit="round", disable=options["quiet"]) as bar:
            results = asyncio.run(
                run_bots(
                    options["base"],
                    study.slug,
                    options["participants"],
                    token=token,
                    answers=answers,
                    prefix=options["prefix"] or f"PILOT{secrets.token_hex(3).upper()}-",
                    on_round=lambda: bar.update(1),
                    checks=attention_checks(study),
                    fail_checks=options["fail_attention"],
                    idle_once=options["idle_once"],
                )
            )
        # The command's own connection may have been cut while the bots played (a database
        # restart, a fault pass): the report is read on a fresh one, tried again as a page is.
        connections.close_all()
        report = retry(
            lambda: pilot_report(study, results, fail_attention=options["fail_attention"]),
            retry_on=TRANSIENT,
            pauses=(1.0, 2.0, 4.0, 8.0),
            before_retry=connections.close_all,
        )
        self.stdout.write(json.dumps(report, indent=2, default=str))
        if not report["ok"]:
            raise CommandError("the pilot found problems: " + "; ".join(report["problems"]))


def attention_checks(study: Study) -> dict[str, Any]:
    """The questionnaire's attention checks as the bots see them: field name -> expected."""
    return {
        f"q_{item['id']}": item["expected"] for item in questionnaire.checks(study.questionnaire)
    }


def pilot_report(study: Study, results: list[BotResult], fail_attention: int = 0) -> dict[str, Any]:
    """What the site recorded for the bots, and the problems a pilot is meant to catch: among
    them a bot screened out or flagged by an attention check it answered as designed, and a bot
    that missed one on purpose (``--fail-attention``) without the study's policy following."""
    problems = [f"bot {r.index}: {r.error}" for r in results if r.error]
    # a fault a page rides out is counted (met()); a page the site failed to render is a bug
    problems += [
        f"bot {r.index} met a server error: {i}"
        for r in results
        for i in r.interruptions
        if "answered 500" in i
    ]
    by_public = {
        p.public_id: p
        for p in Participant.objects.filter(
            study=study, public_id__in=[r.public_id for r in results if r.public_id]
        )
    }
    people = []
    for result in results:
        participant = by_public.get(result.public_id)
        if participant is None:
            people.append(
                {"bot": result.index, "status": result.status or "no record", **met(result)}
            )
            continue
        expected_code = participant.completion_code
        row = {
            "bot": result.index,
            "public_id": participant.public_id,
            "pilot": participant.is_pilot,
            "status": participant.status,
            "condition": participant.condition,
            "randomisation_unit": participant.assignment.get("unit", ""),
            "group": participant.assignment.get("group"),
            "consented_at": participant.consented_at,
            "rounds_finished": participant.rounds_finished,
            "total_reward": participant.total_reward,
            "code_shown": result.code,
            "payment_amount": participant.payment_amount,
            "bonus": participant.bonus,
            # How a real person who ended this way would be paid (a pilot never is).
            "pay_rule": participant.pay_rule if participant.ending else "",
            "code_action": participant.code_action if participant.ending else "",
            "attention_failed": participant.attention_failed,
            "reason": outcomes.reason(participant),
            **met(result),
        }
        people.append(row)
        problems += _attention_problems(study, participant, result, result.index <= fail_attention)
        problems += _idle_problems(participant, result)
        if not participant.is_pilot:
            problems.append(f"{participant.public_id} is not flagged as a pilot")
        if participant.status == Participant.Status.FINISHED:
            if participant.consented_at is None:
                problems.append(f"{participant.public_id} finished without a consent time")
            if participant.rounds_finished != study.rounds:
                problems.append(f"{participant.public_id} finished {participant.rounds_finished}")
            if result.code != expected_code:
                problems.append(f"{participant.public_id} was shown {result.code!r}")
            if participant.payment_amount != Decimal(study.payment_amount):
                problems.append(f"{participant.public_id} is owed {participant.payment_amount}")
        ended_early = participant.ending not in (None, "finished")
        if ended_early and result.code and result.code != expected_code:
            problems.append(
                f"{participant.public_id} ({participant.status}) was shown {result.code!r}"
            )
        started = participant.status in Participant.STARTED
        if study.conditions.exists() and started and not participant.assignment:
            problems.append(f"{participant.public_id} has no logged condition")
    table_ids = sorted({t for r in results for t in r.tables})
    tables = []
    found = Table.objects.filter(pk__in=table_ids).select_related("study_part")
    for table in found.prefetch_related("seats"):
        seats = [
            {"index": s.index, "kind": s.kind, "agent_spec": s.agent_spec}
            for s in table.seats.all()
        ]
        row = {
            "table": table.pk,
            "status": table.status,
            "condition": table_study.of(table).condition,
            "round": table_study.of(table).round,
            "seats": seats,
        }
        if table.status == Table.Status.FINISHED:
            snap = services.table_state(table.pk)
            row["end"] = (
                snap.engine.outcome(snap.state).get(0, {}).get("end") if snap.is_over else None
            )
        else:
            problems.append(f"table {table.pk} is {table.status}, not finished")
        tables.append(row)
    problems += _nobody_played(results, by_public, people)
    groups: dict[int, set[str]] = {}
    for person in people:
        if person.get("group") is not None:
            groups.setdefault(person["group"], set()).add(person["condition"])
    problems += [f"group {g} is in conditions {sorted(c)}" for g, c in groups.items() if len(c) > 1]
    finished_people = Counter(
        p["condition"] for p in people if p.get("status") == Participant.Status.FINISHED
    )
    return {
        "study": study.slug,
        "participants": len(results),
        "reconnects": sum(r.reconnects for r in results),
        "resends": sum(r.resends for r in results),
        "refused": sum(r.refused for r in results),
        "retries": sum(r.retries for r in results),
        "idled": sum(r.idled for r in results),
        "finished": sum(finished_people.values()),
        "conditions": dict(finished_people),
        "groups": len(groups),
        "mixed_tables": sum(
            1 for t in tables if {s["kind"] for s in t["seats"]} == {"human", "agent"}
        ),
        "tables": tables,
        "people": people,
        "problems": problems,
        "ok": not problems,
    }


def met(result: BotResult) -> dict[str, Any]:
    """What a bot's browser met on its way (sockets opened again, moves sent again, requests
    tried again, and the first few failures), as a person's page would have."""
    return {
        "reconnects": result.reconnects,
        "resends": result.resends,
        "refused": result.refused,
        "retries": result.retries,
        "idled": result.idled,
        "interruptions": result.interruptions,
    }


def _nobody_played(
    results: list[BotResult], by_public: dict[str, Participant], people: list[dict[str, Any]]
) -> list[str]:
    """A pilot in which no bot got to a game rehearsed nothing: it is a problem, with how the
    bots ended (a study that shows as full: its quotas met, or closed by its model budget)."""
    if not results:
        return []
    if any(r.tables or r.rounds or r.moves for r in results) or any(
        p.rounds_finished for p in by_public.values()
    ):
        return []
    ended = Counter(str(p.get("status") or "no record") for p in people)
    how = ", ".join(f"{n} {status}" for status, n in sorted(ended.items()))
    hint = (
        " (the study takes nobody new: its quotas are met, or its model budget is reached; see "
        "`manage.py study spend`)"
        if ended.get(Participant.Status.FULL) or ended.get("full")
        else ""
    )
    return [f"no bot got to play a game: the bots ended {how}{hint}"]


def _idle_problems(participant: Participant, result: BotResult) -> list[str]:
    """What went wrong for a bot that let one turn's deadline pass (``--idle-once``): it must
    have found a turn with a deadline, been told on its board that the turn was passed and the
    seat kept, and still be in the study at the end (a missed turn is not a departure)."""
    if not result.idle_once:
        return []
    who = f"bot {result.index} ({participant.public_id})"
    if not result.idled:
        return [f"{who} was to idle once, but no turn of its had a deadline"]
    problems = []
    if not result.told_missed:
        problems.append(f"{who} idled once and its board never said the turn was passed")
    if participant.status != Participant.Status.FINISHED:
        problems.append(f"{who} idled once and ended {participant.status}, not finished")
    return problems


def _attention_problems(
    study: Study, participant: Participant, result: BotResult, meant_to_fail: bool
) -> list[str]:
    """What went wrong with the attention checks for one bot: an answer given as designed was
    counted as failed (the bot was screened, or flagged), or one missed on purpose was not caught
    or did not lead where the study's policy says (screened with its code, or on to the end)."""
    who = f"bot {result.index} ({participant.public_id})"
    has_checks = bool(attention_checks(study))
    screened = participant.status == Participant.Status.SCREENED
    if not meant_to_fail:
        if screened:
            return [f"{who} was screened out by an attention check it answered as designed"]
        if participant.attention_failed:
            return [f"{who} is flagged for {participant.attention_failed} though it answered them"]
        return []
    if not has_checks:
        return [f"{who} was to miss an attention check, but the questionnaire has none"]
    if not participant.attention_failed and participant.questionnaire_done:
        return [f"{who} missed the attention checks on purpose and was not flagged"]
    if study.attention_failure == "screen" and participant.questionnaire_done:
        if not screened:
            return [f"{who} missed an attention check but was not screened out"]
        if result.code != study.code_screened:
            return [f"{who} was screened but shown {result.code!r}"]
    return []
