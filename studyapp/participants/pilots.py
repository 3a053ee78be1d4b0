"""Pilot tokens: how a simulated participant of ``manage.py pilot`` is told apart from a person.

The study link takes ``?pilot=TOKEN``. The token is signed with the site's secret key for one
study and expires, so only staff (who run the command on the server, or take a token from the
admin) can make one: a participant cannot flag themselves as a pilot, and a pilot flag is set once,
when the participant record is created, so nobody can turn a paid participant into an unpaid pilot
or a pilot into a paid participant afterwards. A token that does not verify is ignored: the visit
is an ordinary one.
"""

from __future__ import annotations

from django.core import signing

SALT = "studyapp.participants.pilot"
MAX_AGE_SECONDS = 7 * 24 * 3600


def pilot_token(slug: str) -> str:
    return signing.dumps({"study": slug}, salt=SALT, compress=True)


def is_pilot_token(slug: str, token: str) -> bool:
    if not token:
        return False
    try:
        data = signing.loads(token, salt=SALT, max_age=MAX_AGE_SECONDS)
    except signing.BadSignature:
        return False
    return isinstance(data, dict) and data.get("study") == slug
