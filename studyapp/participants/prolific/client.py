"""Prolific's researcher API, the few calls that paying people and launching a study need
(studyapp.participants.prolific runs them): approving submissions, creating and paying a bulk
bonus payment, listing a study's submissions; drafting, reading and publishing a study and asking
its cost. Each call is sent once; a refusal or an unreachable Prolific is a
:class:`ProlificError` whose ``detail`` fits one line."""

from __future__ import annotations

import html
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from decimal import Decimal
from http import HTTPStatus
from typing import Any


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
        return self._call("POST", self._base + path, body if body is not None else {})

    def _call(self, method: str, url: str, body: dict[str, Any] | None) -> dict[str, Any]:
        request = urllib.request.Request(
            url,
            data=json.dumps(body).encode() if body is not None else None,
            headers={
                "Authorization": f"Token {self._token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
            method=method,
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

    def submission(self, submission_id: str) -> dict[str, Any]:
        """One submission as Prolific holds it (``GET submissions/<id>/``): ``id``, ``status``
        (``APPROVED``, ``AWAITING REVIEW``, ``RETURNED``, ...), ``participant``, ``study_id``,
        ``bonus_payments`` (paid, in cents)."""
        data = self._call("GET", self._base + f"submissions/{submission_id}/", None)
        if not isinstance(data.get("status"), str):
            raise ProlificError(f"Prolific showed a submission without a status: {data!r:.200}")
        return data

    def create_bonuses(self, study_id: str, lines: list[tuple[str, Decimal]]) -> str:
        csv = "".join(f"{pid},{amount:.2f}\n" for pid, amount in lines)
        data = self._post("submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv})
        bulk_id = data.get("id")
        if not isinstance(bulk_id, str) or not bulk_id:
            raise ProlificError(f"Prolific created a bonus payment without an id: {data!r}")
        return bulk_id

    def pay_bonuses(self, bulk_id: str) -> None:
        self._post(f"bulk-bonus-payments/{bulk_id}/pay/")

    def create_study(self, body: dict[str, Any]) -> dict[str, Any]:
        """A draft study (``POST studies/``); Prolific answers the study with its ``id``."""
        data = self._post("studies/", body)
        if not isinstance(data.get("id"), str) or not data["id"]:
            raise ProlificError(f"Prolific created a study without an id: {data!r:.200}")
        return data

    def study(self, study_id: str) -> dict[str, Any]:
        """A study as Prolific holds it (``GET studies/<id>/``)."""
        data = self._call("GET", self._base + f"studies/{study_id}/", None)
        if not isinstance(data.get("id"), str):
            raise ProlificError(f"Prolific showed a study without an id: {data!r:.200}")
        return data

    def publish_study(self, study_id: str) -> dict[str, Any]:
        """Publish a draft (``POST studies/<id>/transition/`` ``{"action": "PUBLISH"}``)."""
        return self._post(f"studies/{study_id}/transition/", {"action": "PUBLISH"})

    def study_cost(self, reward: int, places: int) -> int:
        """What a study of ``places`` at ``reward`` (minor units) costs with Prolific's VAT and
        fees, in minor units of the account's currency (``POST study-cost-calculator/``)."""
        data = self._post(
            "study-cost-calculator/", {"reward": reward, "total_available_places": places}
        )
        total = data.get("total_cost")
        if isinstance(total, bool) or not isinstance(total, int | float):
            raise ProlificError(f"Prolific's cost calculator answered no total_cost: {data!r:.200}")
        return round(total)

    def submissions(self, study_id: str) -> list[dict[str, Any]]:
        """Every submission of a Prolific study (``GET studies/<id>/submissions/``, following
        its pages): each has ``participant_id`` and ``bonus_payments`` (paid, in cents)."""
        found: list[dict[str, Any]] = []
        url: str | None = self._base + f"studies/{study_id}/submissions/"
        pages = 0
        while url and pages < 1000:
            data = self._call("GET", url, None)
            results = data.get("results")
            if not isinstance(results, list):
                raise ProlificError(f"Prolific listed submissions without results: {data!r:.200}")
            found.extend(r for r in results if isinstance(r, dict))
            links = data.get("_links")
            nxt = links.get("next") if isinstance(links, dict) else None
            url = nxt.get("href") if isinstance(nxt, dict) else None
            pages += 1
        return found


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
