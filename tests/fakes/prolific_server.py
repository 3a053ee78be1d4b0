"""A real HTTP server on 127.0.0.1 that speaks the part of Prolific's researcher API that paying
people uses, for ``manage.py prolific`` tests.

Endpoints (under ``/api/v1/``, ``Authorization: Token <token>`` required, JSON bodies):

- ``POST submissions/bulk-approve/`` ``{"submission_ids": [...]}``: 400 naming unknown or
  already-approved ids (and approves none), else approves all ("Bulk approve in progress").
- ``POST submissions/<id>/transition/`` ``{"action": "APPROVE"}``: one submission, answered with
  the submission object. Prolific documents this call as idempotent ("if you make the same
  request twice, the second request will be ignored"): a second approval is answered 200 and
  pays nothing again. ``second_approval = "refuse"`` answers it 400 "Submission is already
  approved." instead, as a loopback of an older API did; neither pays twice.
- ``GET submissions/<id>/``: the submission object: ``id``, ``status`` (``APPROVED``,
  ``AWAITING REVIEW``, ``RETURNED``, ...), ``study_id``, ``participant``, ``started_at``,
  ``completed_at``, ``entered_code``, ``bonus_payments`` (cents), ``return_requested``.
- ``POST submissions/bonus-payments/`` ``{"study_id", "csv_bonuses": "pid,amount\\n..."}``: 400
  when a participant took no part in that study or an amount is not a positive number, else 201
  with the new bulk payment's ``id``. Nothing is paid yet.
- ``POST bulk-bonus-payments/<id>/pay/``: pays every line of that bulk payment; 404 if it does
  not exist. As Prolific documents, this call is **not idempotent**: paying a bulk payment twice
  pays everyone twice (``payments`` then shows each line twice).
- ``GET studies/<id>/submissions/``: the study's submissions, ``{"results": [{"id",
  "participant_id", "study_id", "status", "bonus_payments": [cents, ...]}], "_links": {"next":
  {"href": ...}}, "meta": {"count"}}``, ``page_size`` per page; ``bonus_payments`` lists what was
  paid on the submission, in cents, as Prolific's submission object does. Prolific documents no
  endpoint listing bulk bonus payments, so this is how a run sees what was paid.

State to arrange and inspect: ``add_submission(submission_id, participant_id, study_id)``,
``approved`` (set of submission ids), ``statuses`` (submission id -> a status other than awaiting
review or approved, e.g. ``RETURNED``), ``base_payments`` (submission ids in the order their
base reward was paid: once each, by the first approval), ``payments`` (list of ``(participant_id, Decimal)`` actually
paid), ``requests`` (``(method, path, body)`` in arrival order), ``pay_calls`` (pay calls
answered), and the failure knobs: ``fail_next_pay`` (answer the next pay call 503 without
paying, as a server that went away would), ``fail_next_pay_after_paying`` (pay, then answer 500),
``fail_next_create_after_creating`` (create the bulk payment, then answer 500 without its id),
``delay`` (seconds every call waits before it is handled: a slow Prolific),
``fail_next_bulk_approve_after_approving`` (approve every id, then answer 500),
``fail_next_bulk_approve`` (answer 500 approving nothing), ``fail_submission_reads`` (answer every
read of a submission, ``GET submissions/<id>/`` and ``GET studies/<id>/submissions/``, 503),
``no_single_reads`` (answer ``GET submissions/<id>/`` 404 for every id, as a loopback that serves
only the study listing would), ``lagging`` (submission ids whose status still reads ``AWAITING
REVIEW`` after they were approved, as a bulk approval Prolific carries out in the background),
``drop_next_bulk_approve`` (answer the next bulk approval "in progress" and approve nothing: a
background approval that never happened).

Launching a study (``manage.py prolific draft|check|publish``, ``study plan``):

- ``POST studies/``: a draft study, checked as Prolific does (``name``, ``description``,
  ``external_study_url``, ``prolific_id_option``, ``estimated_completion_time`` and ``reward`` as
  whole numbers above zero (the reward in the currency's minor unit), ``total_available_places``,
  and ``completion_codes``: a list of ``{"code", "code_type", "actions": [{"action", ...}]}``,
  each code unique, each action one of Prolific's); 400 naming the field, else 201 with the study
  object (``id``, ``status`` ``UNPUBLISHED`` and every field sent).
- ``GET studies/<id>/``: the study object; 404 if there is none.
- ``POST studies/<id>/transition/`` ``{"action": "PUBLISH"}``: the study's ``status`` becomes
  ``ACTIVE``; 400 for another action or a study already published.
- ``POST study-cost-calculator/`` ``{"reward", "total_available_places"}``: ``{"total_cost"}``,
  in minor units, reward × places × (1 + ``fee_rate``) as a fractional number, as Prolific's
  answer is a double.

State: ``studies`` (id -> the study object), ``published`` (ids in the order published), and
``edit_study(id, **fields)`` to change a draft as someone on Prolific's site would.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


class FakeProlific:
    def __init__(self, token: str = "prolific-test-token") -> None:
        self.token = token
        self.submissions: dict[str, dict[str, str]] = {}
        self.approved: set[str] = set()
        self.statuses: dict[str, str] = {}
        self.base_payments: list[str] = []
        self.second_approval = "ignore"
        self.fail_next_bulk_approve_after_approving = False
        self.fail_next_bulk_approve = False
        self.fail_submission_reads = False
        self.no_single_reads = False
        self.lagging: set[str] = set()
        self.drop_next_bulk_approve = False
        self.batches: dict[str, dict[str, Any]] = {}
        self.payments: list[tuple[str, Decimal]] = []
        self.requests: list[tuple[str, str, Any]] = []
        self.fail_next_pay = False
        # A gateway in front of the API answering with its HTML error page (status), once.
        self.html_error_next: int | None = None
        self.fail_next_pay_after_paying = False
        self.fail_next_create_after_creating = False
        self.delay = 0.0
        self.page_size = 100
        self.pay_calls: list[str] = []
        self.bonus_cents: dict[str, list[int]] = {}  # submission id -> bonuses paid, in cents
        self.studies: dict[str, dict[str, Any]] = {}
        self.published: list[str] = []
        self.fee_rate = 0.42
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/v1/"

    def __enter__(self) -> FakeProlific:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_submission(self, submission_id: str, participant_id: str, study_id: str) -> None:
        self.submissions[submission_id] = {"participant": participant_id, "study": study_id}

    def edit_study(self, study_id: str, **fields: Any) -> None:
        with self._lock:
            self.studies[study_id].update(fields)

    # -- the API ------------------------------------------------------------------------------

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            self.requests.append((method, path, body))
            route, _, query = path.partition("?")
            parts = [p for p in route.split("/") if p][2:]  # after api/v1
            if method == "GET":
                if len(parts) == 3 and parts[0] == "studies" and parts[2] == "submissions":
                    return self._list_submissions(parts[1], parse_qs(query))
                if len(parts) == 2 and parts[0] == "submissions":
                    return self._get_submission(parts[1])
                if len(parts) == 2 and parts[0] == "studies":
                    found = self.studies.get(parts[1])
                    return (200, found) if found else (404, {"error": {"detail": "Not found."}})
                return 404, {"error": {"detail": "Not found."}}
            if method != "POST":
                return 405, {"error": "method not allowed"}
            if parts == ["studies"]:
                return self._create_study(body)
            if len(parts) == 3 and parts[0] == "studies" and parts[2] == "transition":
                return self._study_transition(parts[1], body)
            if parts == ["study-cost-calculator"]:
                return self._cost(body)
            if parts == ["submissions", "bulk-approve"]:
                return self._bulk_approve(body)
            if len(parts) == 3 and parts[0] == "submissions" and parts[2] == "transition":
                return self._transition(parts[1], body)
            if parts == ["submissions", "bonus-payments"]:
                return self._create_bonuses(body)
            if len(parts) == 3 and parts[0] == "bulk-bonus-payments" and parts[2] == "pay":
                return self._pay(parts[1])
            return 404, {"error": {"detail": "Not found."}}

    ACTIONS = (
        "AUTOMATICALLY_APPROVE",
        "MANUALLY_REVIEW",
        "REQUEST_RETURN",
        "ADD_TO_PARTICIPANT_GROUP",
        "REMOVE_FROM_PARTICIPANT_GROUP",
        "DYNAMIC_PAYMENT",
    )

    @staticmethod
    def _whole(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    def _create_study(self, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict):
            return 400, {"error": {"detail": "a JSON object is required"}}
        for key in ("name", "description", "external_study_url", "prolific_id_option"):
            if not isinstance(body.get(key), str) or not body[key]:
                return 400, {"error": {key: ["This field is required."]}}
        for key in ("estimated_completion_time", "reward", "total_available_places"):
            if not self._whole(body.get(key)):
                return 400, {"error": {key: ["A whole number above zero is required."]}}
        codes = body.get("completion_codes")
        if not isinstance(codes, list) or not codes:
            return 400, {"error": {"completion_codes": ["At least one code is required."]}}
        seen = set()
        for entry in codes:
            code = entry.get("code") if isinstance(entry, dict) else None
            actions = entry.get("actions") if isinstance(entry, dict) else None
            if not isinstance(code, str) or not code or code in seen:
                return 400, {
                    "error": {"completion_codes": [f"code {code!r} is missing or repeated"]}
                }
            seen.add(code)
            if not isinstance(entry.get("code_type"), str) or not isinstance(actions, list):
                return 400, {"error": {"completion_codes": [f"code {code}: code_type and actions"]}}
            for action in actions:
                if not isinstance(action, dict) or action.get("action") not in self.ACTIONS:
                    return 400, {"error": {"completion_codes": [f"code {code}: bad action"]}}
        study_id = uuid.uuid4().hex[:24]
        study = {**body, "id": study_id, "status": "UNPUBLISHED"}
        self.studies[study_id] = study
        return 201, study

    def _study_transition(self, study_id: str, body: Any) -> tuple[int, Any]:
        study = self.studies.get(study_id)
        if study is None:
            return 404, {"error": {"detail": "Not found."}}
        if not isinstance(body, dict) or body.get("action") != "PUBLISH":
            return 400, {"error": {"detail": "action must be PUBLISH"}}
        if study["status"] != "UNPUBLISHED":
            return 400, {"error": {"detail": f"The study is {study['status']}."}}
        study["status"] = "ACTIVE"
        self.published.append(study_id)
        return 200, study

    def _cost(self, body: Any) -> tuple[int, Any]:
        reward = body.get("reward") if isinstance(body, dict) else None
        places = body.get("total_available_places") if isinstance(body, dict) else None
        if not self._whole(reward) or not self._whole(places):
            return 400, {"error": {"detail": "reward and total_available_places are required"}}
        return 200, {"total_cost": reward * places * (1 + self.fee_rate)}

    def _bulk_approve(self, body: Any) -> tuple[int, Any]:
        ids = body.get("submission_ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or not ids:
            return 400, {"error": {"detail": "submission_ids is required"}}
        if self.fail_next_bulk_approve:
            self.fail_next_bulk_approve = False
            return 500, {"error": {"detail": "Internal server error"}}
        bad = [
            i
            for i in ids
            if i not in self.submissions or i in self.approved or self.statuses.get(i)
        ]
        if bad:
            return 400, {"error": {"detail": f"These submissions cannot be approved: {bad}"}}
        if self.drop_next_bulk_approve:
            self.drop_next_bulk_approve = False
            return 200, "Bulk approve in progress"
        for submission_id in ids:
            self._approve(submission_id)
        if self.fail_next_bulk_approve_after_approving:
            self.fail_next_bulk_approve_after_approving = False
            return 500, {"error": {"detail": "Internal server error"}}
        return 200, "Bulk approve in progress"

    def _approve(self, submission_id: str) -> None:
        if submission_id not in self.approved:
            self.approved.add(submission_id)
            self.base_payments.append(submission_id)

    def _transition(self, submission_id: str, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict) or body.get("action") != "APPROVE":
            return 400, {"error": {"detail": "unknown action"}}
        if submission_id not in self.submissions:
            return 404, {"error": {"detail": "Submission not found."}}
        if submission_id in self.approved and self.second_approval == "refuse":
            return 400, {"error": {"detail": "Submission is already approved."}}
        if self.statuses.get(submission_id):
            return 400, {
                "error": {
                    "detail": f"Submission is {self.statuses[submission_id]}: cannot approve."
                }
            }
        self._approve(submission_id)  # a second approval is ignored, as documented
        return 200, self._submission(submission_id)

    def status_of(self, submission_id: str) -> str:
        if submission_id in self.approved and submission_id not in self.lagging:
            return "APPROVED"
        return self.statuses.get(submission_id) or "AWAITING REVIEW"

    def _submission(self, submission_id: str) -> dict[str, Any]:
        sub = self.submissions[submission_id]
        return {
            "id": submission_id,
            "started_at": "2026-11-28T10:00:00.000000Z",
            "status": self.status_of(submission_id),
            "study_id": sub["study"],
            "completed_at": "2026-11-28T10:40:00.000000Z",
            "entered_code": sub.get("code"),
            "participant": sub["participant"],
            "bonus_payments": list(self.bonus_cents.get(submission_id, [])),
            "return_requested": None,
        }

    def _get_submission(self, submission_id: str) -> tuple[int, Any]:
        if self.fail_submission_reads:
            return 503, {"error": {"detail": "Service unavailable"}}
        if submission_id not in self.submissions or self.no_single_reads:
            return 404, {"error": {"detail": "Not found."}}
        return 200, self._submission(submission_id)

    def _create_bonuses(self, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict):
            return 400, {"error": {"detail": "JSON object expected"}}
        study_id, csv = body.get("study_id"), body.get("csv_bonuses")
        if not isinstance(study_id, str) or not isinstance(csv, str):
            return 400, {"error": {"detail": "study_id and csv_bonuses are required"}}
        takers = {s["participant"] for s in self.submissions.values() if s["study"] == study_id}
        lines: list[tuple[str, Decimal]] = []
        for row in csv.strip().splitlines():
            pid, _, raw = row.partition(",")
            try:
                amount = Decimal(raw)
            except InvalidOperation:
                return 400, {"error": {"detail": f"bad amount in {row!r}"}}
            if pid not in takers:
                return 400, {"error": {"detail": f"{pid} did not take part in {study_id}"}}
            if amount <= 0:
                return 400, {"error": {"detail": f"bad amount in {row!r}"}}
            lines.append((pid, amount))
        bulk_id = uuid.uuid4().hex[:24]
        self.batches[bulk_id] = {"study": study_id, "lines": lines, "paid": False}
        if self.fail_next_create_after_creating:
            self.fail_next_create_after_creating = False
            return 500, {"error": {"detail": "Internal server error"}}
        return 201, {
            "id": bulk_id,
            "study": study_id,
            "total_amount": str(sum(a for _, a in lines)),
        }

    def _pay(self, bulk_id: str) -> tuple[int, Any]:
        batch = self.batches.get(bulk_id)
        if batch is None:
            return 404, {"error": {"detail": "Bulk bonus payment not found."}}
        if self.fail_next_pay:
            self.fail_next_pay = False
            return 503, {"error": {"detail": "Service unavailable"}}
        self.pay_calls.append(bulk_id)
        batch["paid"] = True  # again, if it was paid already: the call is not idempotent
        self.payments.extend(batch["lines"])
        for pid, amount in batch["lines"]:
            for sub_id, sub in self.submissions.items():
                if sub["participant"] == pid and sub["study"] == batch["study"]:
                    self.bonus_cents.setdefault(sub_id, []).append(int(amount * 100))
                    break
        if self.fail_next_pay_after_paying:
            self.fail_next_pay_after_paying = False
            return 500, {"error": {"detail": "Internal server error"}}
        return 202, f"Bulk bonus payment with ID {bulk_id} is being processed asynchronously."

    def _list_submissions(self, study_id: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        if self.fail_submission_reads:
            return 503, {"error": {"detail": "Service unavailable"}}
        rows = [
            {
                "id": sub_id,
                "participant_id": sub["participant"],
                "study_id": study_id,
                "status": self.status_of(sub_id),
                "bonus_payments": list(self.bonus_cents.get(sub_id, [])),
            }
            for sub_id, sub in self.submissions.items()
            if sub["study"] == study_id
        ]
        page = int((query.get("page") or ["1"])[0])
        start = (page - 1) * self.page_size
        chunk = rows[start : start + self.page_size]
        more = start + self.page_size < len(rows)
        link = f"{self.url}studies/{study_id}/submissions/?page={page + 1}" if more else None
        return 200, {
            "results": chunk,
            "_links": {"next": {"href": link}},
            "meta": {"count": len(rows)},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                if self.headers.get("Authorization") != f"Token {fake.token}":
                    self._send(401, {"error": {"detail": "Invalid token."}})
                    return
                self._send(*fake.answer("GET", self.path, None))

            def do_POST(self) -> None:
                if fake.html_error_next is not None:
                    status, fake.html_error_next = fake.html_error_next, None
                    page = (
                        "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>"
                        + "<h1>502 Bad Gateway</h1><p>nginx</p>" * 50
                        + "</body></html>"
                    ).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(page)))
                    self.end_headers()
                    self.wfile.write(page)
                    return
                if self.headers.get("Authorization") != f"Token {fake.token}":
                    self._send(401, {"error": {"detail": "Invalid token."}})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    self._send(400, {"error": {"detail": "invalid JSON"}})
                    return
                self._send(*fake.answer("POST", self.path, body))

            def _send(self, status: int, data: Any) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
