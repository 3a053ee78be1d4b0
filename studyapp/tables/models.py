"""Tables, the seats at them, the turn log, and the policy texts agent seats play with.

A table's game state is never stored: it is the engine's fold over the table's ``Turn`` rows
(DESIGN core idea 1). The unique ``(table, seq)`` key is what makes concurrent writers safe: two
processes that try to commit the same move number cannot both succeed.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from studyapp.tables import timing
from studyapp.tables.options import TableOptions


def default_options() -> dict[str, Any]:
    return {}


class Table(models.Model):
    class Status(models.TextChoices):
        LOBBY = "lobby", "waiting for players"
        PLAYING = "playing", "playing"
        FINISHED = "finished", "finished"
        ABORTED = "aborted", "ended early"
        PAUSED = "paused", "paused (the answering model failed)"

    game = models.CharField(max_length=32)
    config = models.JSONField()
    seed = models.BigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PLAYING)
    # Read through ``opts`` (every key, typed: studyapp.tables.options.TableOptions).
    options = models.JSONField(
        default=default_options,
        blank=True,
        help_text="wait_seconds, lobby_timeout (fill|exit), turn_deadline_seconds, "
        "dropout (replace|skip|end), agent_delay_seconds, replacement_spec, "
        "max_oracle_failures; study tables add study, condition and round.",
    )
    exit_code = models.CharField(
        max_length=32, blank=True, help_text="Paid exit code for humans released from a lobby."
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "game"])]

    def __str__(self) -> str:
        return f"{self.game} table #{self.pk} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status in (self.Status.LOBBY, self.Status.PLAYING)

    @property
    def opts(self) -> TableOptions:
        """The options, typed (:class:`studyapp.tables.options.TableOptions`), read once per
        ``options`` object: assign a new dict to change them (as every writer does)."""
        cached = self.__dict__.get("_opts")
        if cached is None or cached[0] is not self.options:
            cached = (self.options, TableOptions.from_json(self.options))
            self.__dict__["_opts"] = cached
        return cached[1]

    @property
    def language(self) -> str:
        """The language the table is played and shown in: its study's, else English."""
        return self.opts.language or "en"

    def option(self, name: str) -> Any:
        """A per-table option, falling back to the site-wide default from settings."""
        return getattr(self.opts, name)

    def turn_deadline(self) -> float | None:
        """The turn deadline in seconds, or None (:func:`studyapp.tables.timing.table_turn_deadline`)."""
        return timing.table_turn_deadline(self.opts)


def new_exit_code() -> str:
    return secrets.token_hex(4).upper()


class PolicyRecord(models.Model):
    """A policy text an agent can play with: written by hand, or extracted by a ``policy`` job
    (studyapp.pipelines, which writes records here and names its job by id).

    Records are versioned per ``name``: a new extraction under the same name gets the next
    version, and older versions stay, so every game can say which text it was played with. The
    table keeps the name it had when the model belonged to the pipelines app.
    """

    class Kind(models.TextChoices):
        RULE = "rule", "rule policy"
        EXPERIENCE = "experience", "experience policy"
        CUMULATIVE = "cumulative", "cumulative memory"
        HUMAN = "human", "human policy"

    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    game = models.CharField(max_length=32)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    source = models.TextField(blank=True, help_text="Where it came from: model, games, job.")
    text = models.TextField()
    job_id = models.BigIntegerField(
        null=True, blank=True, db_index=True, help_text="The pipelines job that made it, if any."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "pipelines_policyrecord"
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="unique_policy_version")
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version} ({self.kind}, {self.game})"

    @classmethod
    def add(cls, *, name: str, game: str, kind: str, text: str, **fields: Any) -> PolicyRecord:
        """Store ``text`` as the next version of ``name``."""
        with transaction.atomic():
            latest = (
                cls.objects.select_for_update()
                .filter(name=name)
                .aggregate(models.Max("version"))["version__max"]
            )
            return cls.objects.create(
                name=name, game=game, kind=kind, text=text, version=(latest or 0) + 1, **fields
            )

    @classmethod
    def latest(cls, name: str) -> PolicyRecord | None:
        """The newest version of ``name``: what a seat or an experience setting that names a
        policy plays with."""
        return cls.objects.filter(name=name).order_by("-version").first()


class Seat(models.Model):
    """One place at a table. A human seat is held by a Django session (anonymous participants) or a
    user (staff); an agent seat by a model spec, an experience setting and optionally a policy. An empty human seat
    (no session, no user) is a lobby place still waiting for someone."""

    class Kind(models.TextChoices):
        HUMAN = "human", "human"
        AGENT = "agent", "agent"

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats")
    index = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=8, choices=Kind.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    session_key = models.CharField(max_length=64, blank=True, db_index=True)
    agent_spec = models.CharField(max_length=200, blank=True)
    setting = models.CharField(
        max_length=32,
        blank=True,
        help_text="Experience setting of an agent seat (none, rule-policy, ...); empty with a "
        "policy means the setting that policy was made for.",
    )
    policy = models.ForeignKey(
        PolicyRecord,
        null=True,
        blank=True,
        on_delete=models.PROTECT,  # a game must always be able to say which text it played with
        related_name="seats",
        help_text="The policy text an agent seat plays with.",
    )
    connected = models.BooleanField(default=False)
    last_seen = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["table", "index"]
        constraints = [
            models.UniqueConstraint(fields=["table", "index"], name="unique_seat_index"),
        ]

    def __str__(self) -> str:
        # never any of the session key: it opens the seat
        held = "held" if self.session_key or self.user_id else "empty"
        who = self.agent_spec if self.kind == self.Kind.AGENT else held
        return f"seat {self.index} of table #{self.table_id} ({self.kind}: {who})"

    @property
    def is_vacant(self) -> bool:
        return self.kind == self.Kind.HUMAN and not self.session_key and self.user_id is None


PERSON_ACTOR = "person"  # Turn.actor of a move a person made
# The seat of a person who left a table whose dropout policy is "skip": every turn of theirs is
# the engine's do-nothing move, played at once (also the Turn.actor of such a move).
SKIP_SPEC = "skip"
# Events of the table itself, made by nobody at a seat: their Turn.actor is empty.
TABLE_EVENTS = ("abort", "takeover", "resume")


class Turn(models.Model):
    """One event of a table's log, committed before anyone is told about it. ``actor`` credits
    the move to whoever made it at the time (the seat's holder then), so a seat an agent took
    over keeps its person's moves apart from the agent's."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="turns")
    seq = models.PositiveIntegerField()
    seat = models.IntegerField(null=True, blank=True, help_text="Seat index; empty for abort.")
    event = models.JSONField()
    usage = models.JSONField(
        default=dict,
        blank=True,
        help_text="What an agent's turn cost: calls, tokens and characters in and out, latency, "
        "retries, and error when a model call failed. Empty for humans and offline agents.",
    )
    actor = models.CharField(
        max_length=200,
        blank=True,
        help_text="Who made the move: 'person' (the person holding the seat then), the agent spec "
        "of the agent that held it (also one that took over a person's seat), or empty for an "
        "event of the table itself (a takeover, an abort, a resume).",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["table", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["table", "seq"], name="unique_turn_seq"),
        ]

    def __str__(self) -> str:
        return f"#{self.table_id}.{self.seq} {self.event.get('type')}"
