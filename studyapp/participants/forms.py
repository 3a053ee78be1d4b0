"""Forms for what participants type or pick. Lengths are capped here so over-long input is refused
with a message instead of being cut silently."""

from __future__ import annotations

from django import forms

from studyapp.participants.flow import PRACTICE_CHOICES
from studyapp.participants.models import POLICY_MAX_LENGTH


class ConsentForm(forms.Form):
    """The version travels with the form so a person who read an older text must read the new one."""

    version = forms.CharField(max_length=32, widget=forms.HiddenInput)
    agree = forms.BooleanField(label="I have read the above and agree to take part.")


class PracticeForm(forms.Form):
    choice = forms.ChoiceField(choices=PRACTICE_CHOICES, widget=forms.RadioSelect, label="")


class PolicyForm(forms.Form):
    policy = forms.CharField(
        label="Your advice",
        max_length=POLICY_MAX_LENGTH,
        required=False,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 8, "maxlength": POLICY_MAX_LENGTH}),
    )


class WithdrawForm(forms.Form):
    delete_data = forms.BooleanField(
        required=False,
        label="Also delete my games and answers (we keep only what we need to pay you).",
    )
