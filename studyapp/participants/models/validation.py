"""What a study's fields may hold, checked on the fields themselves or in ``Study.clean``, so every
path that saves a study (the admin, ``study apply``, the shell) checks them in ``full_clean``: the
completion address, the amounts and codes, the comprehension checks."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator, URLValidator


def validate_completion_url(value: str) -> None:
    """A recruiter's full address, or a path on this site (the demo study, which has no real
    recruiter, returns people to a local page that shows their code).

    Browsers read a backslash as a slash, so ``/\\evil.example/x`` and ``\\\\evil.example`` go to
    another site just like ``//evil.example``: backslashes, control characters and spaces are
    refused everywhere, and a path must not start with two slashes."""
    if "\\" in value or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValidationError("A completion address may not contain backslashes or spaces.")
    if value.startswith("/") and not value.startswith("//"):
        return
    try:
        URLValidator(schemes=["http", "https"])(value)
    except ValidationError:
        raise ValidationError(
            "Enter a full address (https://…) or a path on this site (/…)."
        ) from None


# The rules for pay and codes, on the fields themselves, so every path that saves a study (the
# admin, ``study apply``, the shell) checks them in ``full_clean``: an amount is not below zero,
# and a code is plain letters and digits (it is shown on a page and sent in a link).
validate_amount = MinValueValidator(Decimal("0"), message="An amount cannot be below zero.")
validate_code = RegexValidator(
    r"\A[A-Za-z0-9_-]{1,64}\Z",
    message="A code may hold only letters, digits, '-' and '_' (at most 64).",
)


def check_list_problem(checks: object) -> str:
    """Why a list of comprehension checks is malformed ('' when it is fine)."""
    if not isinstance(checks, list):
        return 'Checks must be a list of {"question", "options", "answer"}.'
    for number, check in enumerate(checks, start=1):
        if not isinstance(check, dict) or set(check) != {"question", "options", "answer"}:
            return f'Check {number} needs exactly "question", "options" and "answer".'
        options = check["options"]
        if not isinstance(options, list) or len(options) < 2:
            return f"Check {number} needs at least two options."
        if check["answer"] not in options:
            return f"Check {number}: the answer must be one of its options."
    return ""
