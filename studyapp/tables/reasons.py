"""Why a table's game was ended, as its abort turn says it to the people at the table: written in
English into the turn (the log keeps one language) and shown through ``{% translate %}`` in the
table's language (gettext_noop marks them for makemessages). The driver writes them; the boards
show them."""

from django.utils.translation import gettext_noop

PAUSED_ENDED = gettext_noop(
    "The game was ended: the answering side stayed unavailable. This round counts as ended; "
    "you can go on."
)
PLAYER_LEFT = gettext_noop("A player left the study.")
MISSED_DEADLINE = gettext_noop("A player missed the turn deadline.")
