"""Paying people through Prolific's API: approving finished submissions and paying bonuses.

Prolific pays the base reward when a submission is approved (in bulk, by submission id: the link's
``SESSION_ID``) and anything else as a bonus, in two calls: a bulk bonus payment is created from
``participant_id,amount`` lines, then paid. Prolific's pay call is not idempotent (paying one
bulk payment twice pays twice), so money moves once by three rules:

- one run at a time per study: ``approve`` and ``pay`` hold the study's payment lock
  (studyapp.locks), and a second run waits for the first, then finds nothing left to do;
- every bulk payment is recorded (``BonusBatch``) before it is created and marked before it is
  paid, each step committed, so a run cut off anywhere leaves a record saying what may have
  happened;
- the next run settles open records against Prolific's own view (the submissions' paid
  ``bonus_payments``) before paying anyone: a batch shown paid is recorded paid, one shown unpaid
  is paid once (or, if its id was never seen, replaced), never paid a second time.

What is owed comes from the participant's record (``Participant.bonus_due``): those who finished
are approved and get their bonus; those who stopped early get the share they earned as a bonus.
Pilots are never paid. Nothing here runs unless staff run ``manage.py prolific``.

The modules: ``client`` (the HTTP calls), ``records`` (the ledger's records and their states),
``approvals`` (base pay by approving submissions), ``bonuses`` (new bulk bonus payments),
``settlement`` (paying or closing what earlier runs left open) and ``ledger_check`` (the ledger
against Prolific, ``prolific status``).
"""
