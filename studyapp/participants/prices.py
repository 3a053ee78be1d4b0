"""What a model's tokens cost a study: the price per million tokens (input, output) of a model
spec, from the study's own ``model_prices`` (in its currency) or the site's table
(``settings.MODEL_PRICES``, in ``settings.MODEL_PRICE_CURRENCY``), and the cost of a number of
tokens at that price. Offline and local agents cost nothing. A model priced nowhere, or priced
only in another currency than the study's, has no price (None): the plan and the spend say so
rather than guess, and a study with a model budget must price every model it calls.

Below the models (``Study.clean`` asks it): it reads a study through its fields only."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings

from games.llm.providers import local_path

MILLION = Decimal(1_000_000)
FREE = (Decimal(0), Decimal(0))


def parse_price(value: object) -> Decimal | None:
    """A price per million tokens, or None when ``value`` is not one (no bool, no exponent, no
    infinity or NaN, not below zero)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        return None
    text = (repr(value) if isinstance(value, float) else str(value)).strip()
    if "e" in text.lower().replace("inf", "").replace("nan", ""):
        return None
    try:
        price = Decimal(text)
    except ArithmeticError:
        return None
    if not price.is_finite() or price < 0:
        return None
    return price


def price_problems(prices: object) -> list[str]:
    """Why ``prices`` is not a table of model spec -> [input, output] per million tokens; empty
    when it is."""
    if not isinstance(prices, dict):
        return [
            'model_prices must be a table of model spec = ["input", "output"] per million tokens.'
        ]
    problems = []
    for spec, pair in prices.items():
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            problems.append(
                f'model_prices[{spec!r}] must be ["input", "output"] per million tokens.'
            )
            continue
        for which, value in zip(("input", "output"), pair, strict=True):
            if parse_price(value) is None:
                problems.append(
                    f"model_prices[{spec!r}]: the {which} price {value!r} is not a finite amount "
                    'at or above zero, such as "0.15".'
                )
    return problems


def is_free(spec: str) -> bool:
    """Offline agents and local models (weights on this machine) cost no tokens."""
    return spec.startswith("offline:") or local_path(spec) is not None


def price_of(study: Any, spec: str) -> tuple[Decimal, Decimal] | None:
    """(input, output) per million tokens of ``spec`` for ``study``, or None when it has none."""
    own = study.model_prices if isinstance(study.model_prices, dict) else {}
    pair = own.get(spec)
    if isinstance(pair, list | tuple) and len(pair) == 2:
        parsed = [parse_price(value) for value in pair]
        if None not in parsed:
            return parsed[0], parsed[1]  # type: ignore[return-value]
    if is_free(spec):
        return FREE
    if study.currency != settings.MODEL_PRICE_CURRENCY:
        return None
    pair = settings.MODEL_PRICES.get(spec)
    if pair is None:
        return None
    parsed = [parse_price(value) for value in pair]
    return None if None in parsed else (parsed[0], parsed[1])  # type: ignore[return-value]


def cost(price: tuple[Decimal, Decimal] | None, input_tokens: float, output_tokens: float):
    """What the tokens cost at ``price`` (4 decimals), or None without a price."""
    if price is None:
        return None
    amount = (
        Decimal(str(input_tokens)) * price[0] + Decimal(str(output_tokens)) * price[1]
    ) / MILLION
    return amount.quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
