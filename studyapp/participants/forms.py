"""Forms for what participants type or pick. Lengths are capped here so over-long input is refused
with a message instead of being cut silently."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from studyapp.participants.models import POLICY_MAX_LENGTH
from studyapp.text import character_problem


def readable(text: str) -> None:
    """The rule for typed text (studyapp.text), as for moves: other readers (staff, and the next
    participants shown this advice) see what was typed."""
    problem = character_problem(text)
    if problem:
        raise ValidationError(_("This cannot be accepted: %(problem)s.") % {"problem": problem})


class ConsentForm(forms.Form):
    """The version travels with the form so a person who read an older text must read the new one."""

    CHANGED = gettext_lazy("The consent form has changed; please read it again.")

    version = forms.CharField(max_length=32, widget=forms.HiddenInput)
    agree = forms.BooleanField(
        label=gettext_lazy("I have read the above and agree to take part."),
        error_messages={
            "required": gettext_lazy("Please tick the box to agree, or choose “I do not agree”.")
        },
    )

    def clean(self) -> dict:
        """A version no page of ours sent (too long, a NUL) is a hidden field the person cannot
        see or fix: they are asked to read the form again, as for an older version."""
        cleaned = super().clean()
        if self.has_error("version"):
            del self.errors["version"]
            self.add_error(None, self.CHANGED)
        return cleaned


class ChecksForm(forms.Form):
    """The study's comprehension checks, one radio group each (``check_0``, ``check_1``, ...)."""

    def __init__(self, checks: list[dict], *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        for number, check in enumerate(checks):
            self.fields[f"check_{number}"] = forms.ChoiceField(
                label=check["question"],
                choices=[(option, option) for option in check["options"]],
                widget=forms.RadioSelect,
                error_messages={"required": gettext_lazy("Please choose an answer.")},
            )

    def answers(self) -> list[str]:
        return [self.cleaned_data[name] for name in self.fields]


class PolicyForm(forms.Form):
    """The limit is a validator, not ``max_length``, which would put ``maxlength`` on the textarea
    and let the browser cut a long answer silently. The page shows the limit and a counter, and
    the server refuses longer text with a message."""

    policy = forms.CharField(
        label="Your advice",
        validators=[MaxLengthValidator(POLICY_MAX_LENGTH), readable],
        required=False,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 8, "aria-describedby": "policy-limit policy-count"}),
    )


class WithdrawForm(forms.Form):
    delete_data = forms.BooleanField(
        required=False,
        label=gettext_lazy(
            "Also delete my games and answers (we keep only what we need to pay you)."
        ),
    )
