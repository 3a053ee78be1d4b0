"""Paying people through Prolific's API: approving finished submissions and paying bonuses.

Prolific pays the base reward when a submission is approved (in bulk, by submission id: the link's
``SESSION_ID``) and anything else as a bonus, in two calls: a bulk bonus payment is created from
``participant_id,amount`` lines, then paid. Paying twice pays twice, so each participant's bonus
records the bulk payment it was put in before that payment is paid; a later run pays that same
bulk payment again (which Prolific refuses once it is paid) and never creates a second one.

What is owed comes from the participant's record (``Participant.bonus_due``): those who finished
are approved and get their bonus; those who stopped early get the share they earned as a bonus.
Pilots are never paid. Nothing here runs unless staff run ``manage.py prolific``.
"""

from __future__ import annotations

import html
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from http import HTTPStatus
from typing import Any

from studyapp.participants.models import Participant, Study

# Prolific takes at most this many submissions in one bulk approval (we keep well below it).
APPROVE_CHUNK = 100


class ProlificError(Exception):
    """Prolific refused a call or could not be reached; ``detail`` is what it answered."""

    def __init__(self, detail: str, status: int | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status


class ProlificClient:
    """The few calls of Prolific's researcher API that paying people needs. A call is sent once:
    one that failed may have been carried out, so nothing is repeated blindly (a later run
    pays through the bulk payment it recorded)."""

    def __init__(self, token: str, base_url: str, *, timeout: float = 30.0) -> None:
        if not token:
            raise ProlificError("PROLIFIC_API_TOKEN is not set")
        parts = urllib.parse.urlsplit(base_url or "")
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ProlificError(
                f"PROLIFIC_API_URL {base_url!r} is not a web address such as "
                "https://api.prolific.com/api/v1/"
            )
        self._token = token
        self._base = base_url.rstrip("/") + "/"
        self._timeout = timeout

    def close(self) -> None:
        pass  # one connection per call: nothing held

    def _post(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        request = urllib.request.Request(
            self._base + path,
            data=json.dumps(body if body is not None else {}).encode(),
            headers={
                "Authorization": f"Token {self._token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            raise ProlificError(_said(err.code, err.read()), err.code) from err
        except (urllib.error.URLError, OSError) as err:
            raise ProlificError(f"could not reach Prolific: {err}") from err
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def bulk_approve(self, submission_ids: list[str]) -> None:
        self._post("submissions/bulk-approve/", {"submission_ids": submission_ids})

    def approve(self, submission_id: str) -> None:
        self._post(f"submissions/{submission_id}/transition/", {"action": "APPROVE"})

    def create_bonuses(self, study_id: str, lines: list[tuple[str, Decimal]]) -> str:
        csv = "".join(f"{pid},{amount:.2f}\n" for pid, amount in lines)
        data = self._post("submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv})
        bulk_id = data.get("id")
        if not isinstance(bulk_id, str) or not bulk_id:
            raise ProlificError(f"Prolific created a bonus payment without an id: {data!r}")
        return bulk_id

    def pay_bonuses(self, bulk_id: str) -> None:
        self._post(f"bulk-bonus-payments/{bulk_id}/pay/")


def _said(status: int, raw: bytes) -> str:
    """Prolific's reason for a refusal, short enough for one line. A page of HTML (a proxy's or
    a gateway's error page) is named by its title, never printed whole."""
    try:
        data: Any = json.loads(raw)
    except ValueError:
        data = raw.decode("utf-8", "replace")
    text = data if isinstance(data, str) else _flatten(data)
    if isinstance(data, str) and re.search(r"<\s*(!doctype|html|head|body)\b", text, re.I):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
        named = " ".join(html.unescape(title.group(1)).split())[:100] if title else ""
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = "error"
        text = f"{named or phrase} (an HTML error page, not Prolific's API answer)"
    text = " ".join(text.split())
    return f"HTTP {status}: {text[:300]}"


def _flatten(data: Any) -> str:
    if isinstance(data, dict):
        inner = data.get("error", data)
        if isinstance(inner, dict):
            detail = inner.get("detail", inner)
            return detail if isinstance(detail, str) else str(detail)
        return str(inner)
    return str(data)


@dataclass(frozen=True)
class Outcome:
    """What happened (or, in a dry run, would happen) to one participant."""

    participant: str
    action: str  # "approve", "bonus"
    ok: bool
    detail: str
    amount: Decimal | None = None


def to_approve(study: Study) -> list[Participant]:
    """Finished participants (pilots never) whose submission is not approved yet."""
    return list(
        study.participants.filter(
            status=Participant.Status.FINISHED,
            is_pilot=False,
            paid=False,
            base_paid_at__isnull=True,
        ).order_by("pk")
    )


def to_pay(study: Study) -> list[Participant]:
    """Participants with a bonus (or an early stop's share) owed and not yet paid."""
    candidates = study.participants.filter(
        status__in=Participant.PAYABLE, is_pilot=False, paid=False, bonus_paid_at__isnull=True
    ).order_by("pk")
    return [p for p in candidates if p.bonus_due > 0]


def approve(study: Study, client: ProlificClient | None, *, dry_run: bool) -> list[Outcome]:
    """Approve the submissions of the study's finished participants, in bulk; when a bulk call
    is refused, one by one, so each participant's error is shown."""
    outcomes: list[Outcome] = []
    ready: list[Participant] = []
    for p in to_approve(study):
        if not p.prolific_session_id:
            outcomes.append(
                Outcome(p.public_id, "approve", False, "no SESSION_ID recorded; approve by hand")
            )
        else:
            ready.append(p)
    if dry_run or client is None:
        return outcomes + [
            Outcome(p.public_id, "approve", True, f"would approve {p.prolific_session_id}")
            for p in ready
        ]
    for start in range(0, len(ready), APPROVE_CHUNK):
        chunk = ready[start : start + APPROVE_CHUNK]
        try:
            client.bulk_approve([p.prolific_session_id for p in chunk])
        except ProlificError:
            outcomes.extend(_approve_one(client, p) for p in chunk)
            continue
        for p in chunk:
            p.record_payment(base=True)
            outcomes.append(Outcome(p.public_id, "approve", True, "approved"))
    return outcomes


def _approve_one(client: ProlificClient, p: Participant) -> Outcome:
    try:
        client.approve(p.prolific_session_id)
    except ProlificError as err:
        _failed(p, err)
        return Outcome(p.public_id, "approve", False, err.detail)
    p.record_payment(base=True)
    return Outcome(p.public_id, "approve", True, "approved")


def pay(study: Study, client: ProlificClient | None, *, dry_run: bool) -> list[Outcome]:
    """Pay what is owed as bonuses: one bulk payment per Prolific study, created, recorded on each
    participant, then paid. A participant whose bulk payment was created earlier but not paid
    (a failed or interrupted run) is paid through that one, never through a second."""
    outcomes: list[Outcome] = []
    fresh: dict[str, list[Participant]] = defaultdict(list)
    pending: dict[str, list[Participant]] = defaultdict(list)
    for p in to_pay(study):
        if not p.prolific_pid:
            outcomes.append(
                Outcome(p.public_id, "bonus", False, "no PROLIFIC_PID recorded; pay by hand")
            )
        elif p.bonus_batch_id:
            pending[p.bonus_batch_id].append(p)
        elif not p.prolific_study_id:
            outcomes.append(
                Outcome(p.public_id, "bonus", False, "no STUDY_ID recorded; pay by hand")
            )
        else:
            fresh[p.prolific_study_id].append(p)
    if dry_run or client is None:
        for group in [*pending.values(), *fresh.values()]:
            outcomes.extend(
                Outcome(p.public_id, "bonus", True, "would pay", p.bonus_due) for p in group
            )
        return outcomes
    for bulk_id, group in pending.items():
        outcomes.extend(_pay_batch(client, bulk_id, group))
    for study_id, group in fresh.items():
        outcomes.extend(_create_and_pay(client, study_id, group))
    return outcomes


def _create_and_pay(
    client: ProlificClient, study_id: str, group: list[Participant]
) -> list[Outcome]:
    try:
        bulk_id = client.create_bonuses(study_id, [(p.prolific_pid, p.bonus_due) for p in group])
    except ProlificError as err:
        if len(group) == 1:
            _failed(group[0], err)
            return [Outcome(group[0].public_id, "bonus", False, err.detail)]
        # Prolific refuses the whole list for one bad line: find who, paying the others.
        outcomes: list[Outcome] = []
        for p in group:
            outcomes.extend(_create_and_pay(client, study_id, [p]))
        return outcomes
    # Recorded (and committed) before paying, so an interrupted run never creates a second one.
    Participant.objects.filter(pk__in=[p.pk for p in group]).update(bonus_batch_id=bulk_id)
    for p in group:
        p.bonus_batch_id = bulk_id
    return _pay_batch(client, bulk_id, group)


def _pay_batch(client: ProlificClient, bulk_id: str, group: list[Participant]) -> list[Outcome]:
    try:
        client.pay_bonuses(bulk_id)
    except ProlificError as err:
        for p in group:
            _failed(p, err)
        detail = f"bulk payment {bulk_id} not paid: {err.detail} (check it on Prolific)"
        return [Outcome(p.public_id, "bonus", False, detail, p.bonus_due) for p in group]
    outcomes = [
        Outcome(p.public_id, "bonus", True, f"paid ({bulk_id})", p.bonus_due) for p in group
    ]
    for p in group:
        p.record_payment(bonus=True)
    return outcomes


def _failed(p: Participant, err: ProlificError) -> None:
    p.payment_error = err.detail
    p.save(update_fields=["payment_error"])


def summary(outcomes: Iterable[Outcome]) -> dict[str, int]:
    counts = {"ok": 0, "failed": 0}
    for outcome in outcomes:
        counts["ok" if outcome.ok else "failed"] += 1
    return counts
