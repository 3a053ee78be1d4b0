"""What a study's fields may hold, checked on the fields themselves or in ``Study.clean``, so every
path that saves a study (the admin, ``study apply``, the shell) checks them in ``full_clean``: the
completion address, the amounts and codes, the comprehension checks."""

from __future__ import annotations

import re
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


# Currencies without minor units (ISO 4217 exponent 0) among those a study may pay in; every
# other three-letter code is taken to have cents (exponent 2).
NO_MINOR_UNITS = {"JPY", "KRW", "ISK", "CLP", "VND", "UGX", "XOF", "XAF", "PYG"}
AMOUNT_TEXT = re.compile(r"\A[0-9]+(\.[0-9]+)?\Z")


def currency_decimals(currency: str) -> int:
    """How many decimals an amount in this currency may have: 2 (cents), 0 for yen and the
    like."""
    return 0 if str(currency).upper() in NO_MINOR_UNITS else 2


def parse_amount(value: object, field: str, currency: str = "USD") -> Decimal:
    """An amount as written in a study file or a form, or a :class:`ValidationError` that says
    why not: finite, written out in plain digits (no exponent such as 1e3, which reads as 1000
    by accident), not below zero, and at the currency's precision (0.001 is not a sum anyone can
    be paid; rounding it silently would change what was declared)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ValidationError(f"{field} must be an amount such as '10.00'.")
    text = (repr(value) if isinstance(value, float) else str(value)).strip()
    lowered = text.lower().lstrip("+-")
    if lowered in {"inf", "infinity", "nan", "snan"}:
        raise ValidationError(f"{field} must be a finite amount such as '10.00', not {text!r}.")
    if re.fullmatch(r"[0-9]*\.?[0-9]+e[+-]?[0-9]+", lowered):
        raise ValidationError(
            f"{field} {text!r} is in exponent notation, which is refused (1e3 would read as "
            "1000): write the amount out in digits, such as '10.00'."
        )
    if text.startswith("-"):
        raise ValidationError(f"{field}: An amount cannot be below zero ({text!r}).")
    if not AMOUNT_TEXT.match(text.lstrip("+")):
        raise ValidationError(f"{field} must be an amount in digits such as '10.00', not {text!r}.")
    amount = Decimal(text.lstrip("+"))
    places = currency_decimals(currency)
    if -amount.as_tuple().exponent > places and amount != amount.quantize(
        Decimal(1).scaleb(-places)
    ):
        unit = f"cents: {places} decimals" if places else "no decimals"
        raise ValidationError(
            f"{field} {text!r} is finer than {currency} can be paid ({unit}); nothing was "
            "rounded: write the amount you mean."
        )
    if amount >= Decimal("1000000"):
        raise ValidationError(f"{field} {text!r} is too large (at most 999999.99).")
    return amount.quantize(Decimal("0.01"))


def validate_currency(value: str) -> None:
    if not re.fullmatch(r"[A-Z]{3}", value or ""):
        raise ValidationError("A currency is its three-letter ISO code in capitals, e.g. GBP.")
