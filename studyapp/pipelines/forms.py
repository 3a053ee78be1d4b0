"""The start-a-job form: a kind, its parameters as JSON, and optionally a pairwise JSONL upload
that is checked line by line before any job exists."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings
from django.urls import reverse_lazy

from studyapp.pipelines.checks import refusal
from studyapp.pipelines.kinds import KINDS
from studyapp.pipelines.lwe.data import DatasetError, parse_jsonl


class JobForm(forms.Form):
    # Changing the kind swaps in its default parameters (htmx); the "Defaults for" links do the
    # same without JavaScript.
    kind = forms.ChoiceField(
        choices=[(name, name) for name in KINDS],
        widget=forms.Select(
            attrs={
                "hx-get": reverse_lazy("pipelines:new"),
                "hx-target": "#id_parameters",
                "hx-swap": "outerHTML",
            }
        ),
    )
    parameters = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 10, "cols": 70}),
        help_text="JSON object; missing keys take the kind's defaults.",
    )
    dataset = forms.FileField(
        required=False, help_text="Pairwise JSONL for LWE and the baselines (replaces 'dataset')."
    )

    def clean_parameters(self) -> dict[str, Any]:
        try:
            value = json.loads(self.cleaned_data["parameters"] or "{}")
        except json.JSONDecodeError as err:
            raise forms.ValidationError(f"not valid JSON: {err}") from err
        if not isinstance(value, dict):
            raise forms.ValidationError("parameters must be a JSON object")
        return value

    def clean_dataset(self) -> str | None:
        upload = self.cleaned_data.get("dataset")
        if upload is None:
            return None
        data = upload.read()
        try:
            text = data.decode("utf-8")
            parse_jsonl(text.splitlines(), source=upload.name)
        except UnicodeDecodeError as err:
            raise forms.ValidationError("the file is not UTF-8 text") from err
        except DatasetError as err:
            raise forms.ValidationError(str(err).splitlines()) from err
        relative = Path("jobs") / "uploads" / f"{uuid.uuid4().hex}.jsonl"
        path = Path(settings.MEDIA_ROOT) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return str(relative)

    def clean(self) -> dict[str, Any]:
        """Refuse a job that cannot work (an offline agent as a judge) before it is queued."""
        cleaned = super().clean()
        kind, parameters = cleaned.get("kind"), cleaned.get("parameters")
        if kind and isinstance(parameters, dict):
            reason = refusal(kind, {**KINDS[kind].defaults, **parameters})
            if reason:
                self.add_error("parameters", reason)
        return cleaned

    def job_parameters(self) -> dict[str, Any]:
        parameters = dict(self.cleaned_data["parameters"])
        if self.cleaned_data.get("dataset"):
            parameters["dataset"] = self.cleaned_data["dataset"]
        return parameters
