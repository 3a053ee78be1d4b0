"""The jobs and the policy records they make, in the admin."""

from django.contrib import admin

from studyapp.pipelines.models import Job
from studyapp.tables.models import PolicyRecord


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "status", "progress", "started_by", "created_at", "worker")
    list_filter = ("status", "kind")
    readonly_fields = ("log", "result", "cost", "artifacts", "heartbeat_at", "worker")


# The policy records belong to the tables app (its seats play with them); the jobs that make them
# register them here, as they always have been.
@admin.register(PolicyRecord)
class PolicyRecordAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "game", "kind", "created_at", "created_by")
    list_filter = ("game", "kind")
    search_fields = ("name", "text", "source")
