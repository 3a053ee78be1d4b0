"""A study's consent text per version, as people agreed to it (:class:`ConsentVersion`), so
changing the text after anyone agreed never rewrites what they saw. ``Study.save`` decides the
version (``Study.settled_consent_version``) and records its text here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models
from django.utils import timezone

if TYPE_CHECKING:
    from studyapp.participants.models.studies import Study  # which imports this module


def next_consent_version(version: str, taken: set[str]) -> str:
    """The version after ``version`` that is not ``taken``: "2" after "1", "v1-2" after "v1"."""
    if version.isdigit():
        number = int(version) + 1
        while str(number) in taken:
            number += 1
        return str(number)
    suffix = 2
    while f"{version[:28]}-{suffix}" in taken:
        suffix += 1
    return f"{version[:28]}-{suffix}"


class ConsentVersion(models.Model):
    """The text of one consent version of a study, as people agreed to it. Written by
    :meth:`Study.save`; a version's text changes only while nobody has agreed to it."""

    study = models.ForeignKey(
        "participants.Study", on_delete=models.CASCADE, related_name="consent_versions"
    )
    version = models.CharField(max_length=32)
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["study", "created_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "version"], name="one_text_per_consent_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} consent version {self.version}"

    @classmethod
    def record(cls, study: Study) -> None:
        found = cls.objects.filter(study=study, version=study.consent_version).first()
        if found is None:
            cls.objects.create(study=study, version=study.consent_version, text=study.consent_text)
        elif found.text != study.consent_text:  # a draft nobody agreed to (settled_consent_version)
            found.text = study.consent_text
            found.save(update_fields=["text"])
