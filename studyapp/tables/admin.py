from django.contrib import admin

from studyapp.tables.models import Seat, Table, Turn


class SeatInline(admin.TabularInline):
    """A person's seat is held by their browser's session key, which opens the seat (and the
    participant's pages) to whoever has it: the admin shows who holds a seat, never the key."""

    model = Seat
    extra = 0
    exclude = ("session_key",)
    readonly_fields = ("holder",)

    @admin.display(description="held by")
    def holder(self, seat: Seat) -> str:
        if seat.user_id is not None:
            return f"staff user {seat.user}"
        if seat.session_key:
            return "a participant's browser"
        return "nobody" if seat.kind == Seat.Kind.HUMAN else "the agent"


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("id", "game", "status", "seed", "created_at", "finished_at")
    list_filter = ("game", "status")
    inlines = [SeatInline]


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ("table", "seq", "seat", "created_at")
    list_filter = ("table__game",)
    readonly_fields = ("table", "seq", "seat", "event", "usage", "created_at")
