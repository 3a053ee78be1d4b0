from django.contrib import admin

from studyapp.tables.models import Seat, Table, Turn


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0


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
