"""The consent and payment dashboard: Django's admin, so it is staff-only by construction.

Studies show live progress and mint personal invites as a CSV of links
(:mod:`~studyapp.participants.admin.studies`); participants show consent, progress and what they
are owed, with bulk actions to mark them paid and to export the payment sheet
(:mod:`~studyapp.participants.admin.people`); bonus batches, read only
(:mod:`~studyapp.participants.admin.payments`); the CSV downloads are built in
:mod:`~studyapp.participants.admin.exports`. Importing this package registers every model admin.
"""

from studyapp.participants.admin import payments, people, studies

__all__ = ["payments", "people", "studies"]
