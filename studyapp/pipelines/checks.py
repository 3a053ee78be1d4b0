"""Why a job cannot run as asked, in one line a researcher can act on, said before it wastes a
worker: a rule-based ``offline:`` agent asked to judge, or an API model with no
key. The form and the command refuse the first up front; the worker checks both again, since
keys are read where the job runs, which need not be where it was started."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from studyapp.pipelines.kinds import get_kind
from studyapp.providers import provider_config

NO_KEY_NEEDED = "openai-compatible:… with OPENAI_COMPATIBLE_BASE_URL"


def refusal(kind: str, parameters: dict[str, Any]) -> str | None:
    """The reason a ``kind`` job with these parameters (defaults included) makes no sense."""
    wrong = wrong_type(kind, parameters)
    if wrong:
        return wrong
    model = str(parameters.get("model", ""))
    if get_kind(kind).needs_language_model and model.startswith("offline:"):
        return (
            f"{model} is a rule-based agent and cannot judge answers; choose a language model "
            f"(openai:…, anthropic:…, or {NO_KEY_NEEDED})"
        )
    return None


def wrong_type(kind: str, parameters: dict[str, Any]) -> str | None:
    """A parameter whose value is not of its default's type (``{"model": 5}``), named, so the
    form refuses it instead of the job failing later on it."""
    found = get_kind(kind)
    for name in found.models:
        value = parameters.get(name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            return f"{name} must be a model spec such as openai:gpt-4o-mini, not {value!r}"
    for name, default in found.defaults.items():
        value = parameters.get(name)
        if default is None or value is None:
            continue
        if isinstance(default, bool):
            expected: tuple[type, ...] = (bool,)
        elif isinstance(default, int | float):
            expected = (int, float)
        else:
            expected = (type(default),)
        if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            kind_name = {bool: "true or false", str: "a text", list: "a list", dict: "an object"}
            said = kind_name.get(type(default), "a number")
            return f"{name} must be {said}, not {value!r}"
    return None


def missing_credentials(kind: str, parameters: dict[str, Any]) -> str | None:
    """The setting a model of this job needs and the worker lacks, if any."""
    keys = {
        "openai": ("OPENAI_API_KEY", settings.OPENAI_API_KEY),
        "anthropic": ("ANTHROPIC_API_KEY", settings.ANTHROPIC_API_KEY),
    }
    for name in get_kind(kind).models:
        spec = parameters.get(name)
        if not isinstance(spec, str):
            continue
        provider = spec.partition(":")[0].partition("@")[0]  # a malformed spec: the runner's
        if provider in keys and not keys[provider][1]:
            return (
                f"no {keys[provider][0]} is set for {spec}; set it where the job runs, or choose "
                f"another model ({NO_KEY_NEEDED}, or offline:… for experiments)"
            )
        if provider == "openai-compatible":
            try:
                provider_config(spec)
            except ValueError as err:
                return f"{err}; set it where the job runs"
    return None
