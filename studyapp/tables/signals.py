"""What the tables app announces to whoever runs studies on it (the participants app listens,
studyapp/participants/receivers.py): the tables app itself knows nothing of studies."""

from __future__ import annotations

from django.dispatch import Signal

# A study's group lobby is full, or its wait has run out: the group forms (its condition is
# drawn and its people seated). Sent with ``table_id``; a receiver returns what happened
# ("formed", "full", "empty", "not a lobby"), which the sender reports.
group_lobby_closing = Signal()

# A person gave a lobby place back before the game started. Sent with ``table_id`` and ``seat``
# (the index), inside the transaction that frees the place.
lobby_place_left = Signal()
