"""What every model admin of this app shares: a list URL with a filter the admin does not allow
(a typed or stale link, such as ``?study__slug__contains=x``) is answered the admin's way, the
full list with the reason as a message, never the participant-facing 400 page ("open the link
exactly as you received it"), which says nothing to staff."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.contrib.admin.options import IncorrectLookupParameters
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect


class StaffModelAdmin(admin.ModelAdmin):
    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        try:
            return super().changelist_view(request, extra_context)
        except (DisallowedModelAdminLookup, IncorrectLookupParameters) as err:
            self.message_user(
                request,
                f"That filter cannot be used on this list ({err}); the whole list is shown "
                "instead. Use the filters on the right.",
                messages.ERROR,
            )
            return HttpResponseRedirect(request.path)
