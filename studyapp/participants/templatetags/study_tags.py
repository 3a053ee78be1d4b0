"""The study bar of a study table's page: the round, the running total and a way out.

A table page belongs to the tables app, which knows nothing of participants; a study table names
its study in ``Table.options``, and this tag finds the participant this browser is in that study.
"""

from __future__ import annotations

from typing import Any

from django import template

from studyapp.participants import identity
from studyapp.participants.models import Study

register = template.Library()


@register.inclusion_tag("participants/_study_bar.html", takes_context=True)
def study_bar(context: dict[str, Any], table: Any) -> dict[str, Any]:
    request = context.get("request")
    slug = (table.options or {}).get("study")
    study = Study.objects.filter(slug=slug).first() if slug else None
    participant = None
    if study is not None and request is not None:
        participant = identity.session_participant(request.session, study)
    return {
        "study": study,
        "participant": participant,
        "round": (table.options or {}).get("round"),
    }


@register.simple_tag
def study_title(table: Any) -> str:
    slug = (table.options or {}).get("study")
    study = Study.objects.filter(slug=slug).only("title").first() if slug else None
    return study.title if study else ""
