"""Participant pages. Each view finds the participant this browser is, checks that the page is the
one their record allows, and calls one function of the participant's path: who the browser is
(:mod:`studyapp.participants.identity`), the steps (:mod:`studyapp.participants.steps`) or the
rounds (:mod:`studyapp.participants.rounds`).

GET never changes who anyone is: link previewers and crawlers that fetch a study or invite link
claim nothing; the Start button (a POST) does.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import override
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from games import rules_for_people
from studyapp import ratelimit
from studyapp.participants import assignment, identity, pilots, questionnaire, rounds, steps
from studyapp.participants.forms import ChecksForm, ConsentForm, PolicyForm, WithdrawForm
from studyapp.participants.models import POLICY_MAX_LENGTH, Invite, Participant, Study

ParticipantView = Callable[[HttpRequest, Participant], HttpResponse]


def not_found(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "participants/not_found.html", {"message": message}, status=404)


def refused(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "participants/refused.html", {"message": message}, status=403)


def taking_part_elsewhere(request: HttpRequest, study: Study) -> HttpResponse:
    """A PROLIFIC_PID that another browser already uses, without that submission's SESSION_ID
    or the participant's resume code: nothing of that participant is shown."""
    return render(request, "participants/elsewhere.html", {"study": study}, status=409)


def too_many_starts(request: HttpRequest, study: Study) -> HttpResponse:
    """More new starts from this address than the limit: the study's page, in its language."""
    response = render(request, "participants/too_many_starts.html", {"study": study}, status=429)
    response["Retry-After"] = "60"
    return response


def too_many_posts(participant: Participant) -> bool:
    """One more form post of this person in the minute's window is over
    ``PARTICIPANT_POSTS_PER_MINUTE`` (a script posting a form in a loop, not a person)."""
    limit = settings.PARTICIPANT_POSTS_PER_MINUTE
    return bool(limit) and ratelimit.over_rate(f"posts:{participant.pk}", 60, limit)


def posted_too_often(request: HttpRequest, participant: Participant) -> HttpResponse:
    context = {
        "participant": participant,
        "limit": settings.PARTICIPANT_POSTS_PER_MINUTE,
        "back": step_url(participant),
    }
    response = render(request, "participants/too_many_posts.html", context, status=429)
    response["Retry-After"] = "60"
    return response


def stopped_earlier(request: HttpRequest, participant: Participant) -> HttpResponse:
    """A Prolific ID that already stopped taking part: a polite page with the code for the time
    they gave, which is what they need to copy back to the recruiter."""
    study = participant.study
    code = participant.completion_code
    context = {
        "study": study,
        "participant": participant,
        "code": code,
        "link": study.completion_link(code) if code else "",
    }
    return render(request, "participants/stopped.html", context)


def posted(request: HttpRequest) -> QueryDict | None:
    """The form data of a POST, even an empty one (an empty form must still be validated)."""
    return request.POST if request.method == "POST" else None


def step_url(participant: Participant, step: str | None = None) -> str:
    """The page the participant belongs on: their next step, or the answer page someone the idle
    sweep dropped was still writing on (:func:`studyapp.participants.steps.late_step`)."""
    step = step or steps.late_step(participant) or steps.next_step(participant)
    return reverse(f"participants:{step}", args=[participant.public_id])


def participant_page(step: str | None) -> Callable[[ParticipantView], Callable[..., HttpResponse]]:
    """Only this browser's own participant, and only on the step their record allows. A GET for
    another step is sent to the right one; a POST for another step (a crafted request, say one
    that skips consent) is refused."""

    def decorate(view: ParticipantView) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, public_id: str) -> HttpResponse:
            participant = identity.owned_participant(request.session, public_id)
            if participant is None:
                return not_found(request, _("This page does not belong to this browser."))
            if request.method == "POST" and too_many_posts(participant):
                with override(participant.study.language):
                    return posted_too_often(request, participant)
            steps.touch(participant)
            with override(participant.study.language):
                return _step(request, participant)

        def _step(request: HttpRequest, participant: Participant) -> HttpResponse:
            if step is not None and step == steps.late_step(participant):
                return view(request, participant)  # an answer written on after the idle sweep
            if step is not None and steps.next_step(participant) != step:
                if request.method == "POST":
                    if steps.next_step(participant) == "consent":
                        return refused(request, _("Please read and accept the consent form first."))
                    return refused(request, _("That step is not open to you now."))
                return redirect(step_url(participant))
            return view(request, participant)

        return wrapper

    return decorate


def active_study(slug: str) -> Study | None:
    return Study.objects.filter(slug=slug, active=True).first()


@require_http_methods(["GET", "HEAD", "POST"])
def study_link(request: HttpRequest, slug: str) -> HttpResponse:
    """The one shareable link, e.g. /s/<slug>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…"""
    # A closed study refuses newcomers only: people already in it go on (their own browser, their
    # submission's SESSION_ID or their resume link), so closing a study never strands anyone.
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        return not_found(
            request, _("There is no open study at this address. Please check the link.")
        )
    with override(study.language):
        return _study_link(request, study)


def _study_link(request: HttpRequest, study: Study) -> HttpResponse:
    existing = identity.session_participant(request.session, study)
    if existing is not None:
        return redirect(step_url(existing))
    pilot = pilots.is_pilot_token(study.slug, request.GET.get("pilot", ""))
    try:
        ids = identity.recruiter_ids(request.GET, pilot=pilot)
    except identity.BadRecruiterId as err:
        return render(
            request, "participants/welcome.html", {"study": study, "error": str(err)}, status=400
        )
    resume = request.GET.get("resume", "")
    returning = identity.returning_participant(study, ids) or (
        identity.resumed_participant(study, resume) if resume else None
    )
    if returning is None and not study.active:
        return not_found(
            request, _("There is no open study at this address. Please check the link.")
        )
    if returning is None and assignment.is_full(study, pilot=pilot):
        return study_full(request, study)
    if request.method == "POST":
        if returning is None and not pilot and ratelimit.over_limit(request):
            return too_many_starts(request, study)
        try:
            participant = identity.start(request.session, study, ids, pilot=pilot, resume=resume)
        except identity.AlreadyTakingPart:
            return taking_part_elsewhere(request, study)
        except identity.StoppedEarlier as stopped:
            return stopped_earlier(request, stopped.participant)
        return redirect(step_url(participant))
    return render(request, "participants/welcome.html", {"study": study})


def study_full(request: HttpRequest, study: Study) -> HttpResponse:
    """Every condition has met its quota, or the model budget closed the study for now: nobody
    new can take part."""
    context = {"study": study, "closed_for_now": assignment.closed_for_now(study)}
    return render(request, "participants/full.html", context)


@require_safe
def continue_study(request: HttpRequest, slug: str) -> HttpResponse:
    """The Continue link of a study table, which people of several participants may share: it
    takes this browser to its own participant's next page."""
    study = Study.objects.filter(slug=slug).first()
    participant = identity.session_participant(request.session, study) if study else None
    if participant is None:
        return not_found(request, _("This page does not belong to this browser."))
    seated = rounds.seated_round(participant)
    if seated is not None:  # a group just formed: straight to the table it sits at
        rounds.take_seat(request.session, seated)
        return redirect(rounds.table_url(seated))
    return redirect(step_url(participant))


@require_http_methods(["GET", "HEAD", "POST"])
def invite_link(request: HttpRequest, token: str) -> HttpResponse:
    """A personal link: the browser that presses Start owns it; opening it again there resumes."""
    invite = Invite.objects.select_related("study").filter(token=token).first()
    if invite is None or not invite.study.active:
        return not_found(request, _("This invitation link is not valid. Please check the link."))
    try:
        if request.method == "POST":
            participant = identity.claim_invite(request.session, invite)
        else:
            participant = identity.invite_owner(request.session, invite)
    except identity.InviteTaken:
        with override(invite.study.language):
            return refused(
                request, _("This personal link has already been used in another browser.")
            )
    if participant is not None:
        return redirect(step_url(participant))
    with override(invite.study.language):
        context = {"study": invite.study, "invite": invite}
        return render(request, "participants/welcome.html", context)


@participant_page(None)
def resume(request: HttpRequest, participant: Participant) -> HttpResponse:
    return redirect(step_url(participant))


@participant_page("consent")
def consent(request: HttpRequest, participant: Participant) -> HttpResponse:
    study = participant.study
    if request.method == "POST" and "decline" in request.POST:
        steps.decline_consent(request.session, participant)
        return redirect(step_url(participant))
    form = ConsentForm(posted(request), initial={"version": study.consent_version})
    if request.method == "POST" and form.is_valid():
        try:
            participant = steps.give_consent(
                request.session, participant, form.cleaned_data["version"]
            )
        except steps.StepRefused:
            form.add_error(None, ConsentForm.CHANGED)
        except identity.AlreadyTakingPart:
            return taking_part_elsewhere(request, study)
        except identity.StoppedEarlier as stopped:
            return stopped_earlier(request, stopped.participant)
        else:
            return redirect(step_url(participant))
    return render(request, "participants/consent.html", {"participant": participant, "form": form})


@participant_page("instructions")
def instructions(request: HttpRequest, participant: Participant) -> HttpResponse:
    """The rules and the comprehension checks; failing them too often ends the study politely."""
    study = participant.study
    form = ChecksForm(steps.study_checks(study), posted(request))
    wrong = False
    if request.method == "POST" and form.is_valid():
        result = steps.answer_checks(participant, form.answers())
        if result != "wrong":
            return redirect(step_url(participant))
        wrong = True
        form = ChecksForm(steps.study_checks(study))
    context = {
        "participant": participant,
        "study": study,
        "rules": rules_for_people(study.game, study.language),
        "form": form,
        "wrong": wrong,
        "attempts_left": max(study.check_attempts, 1) - participant.check_attempts,
    }
    return render(request, "participants/instructions.html", context)


@participant_page("play")
def play(request: HttpRequest, participant: Participant) -> HttpResponse:
    """Between rounds: the running reward and a button for the next table."""
    if request.method == "POST":
        round_ = rounds.begin_round(request.session, participant)
        return redirect(rounds.table_url(round_))
    state = rounds.play_state(participant)
    if steps.next_step(participant) != "play":
        return redirect(step_url(participant))
    context = {"participant": participant, "study": participant.study, **state}
    context["shown_policy"] = rounds.shown_policy(participant)
    link = reverse("participants:study_link", args=[participant.study.slug])
    token = urlencode({"resume": identity.resume_token(participant)})
    context["resume_link"] = request.build_absolute_uri(f"{link}?{token}")
    return render(request, "participants/play.html", context)


@participant_page("policy")
def policy(request: HttpRequest, participant: Participant) -> HttpResponse:
    form = PolicyForm(posted(request))
    if request.method == "POST" and form.is_valid():
        steps.save_policy(participant, form.cleaned_data["policy"])
        return redirect(step_url(participant))
    context = {"participant": participant, "form": form, "max_length": POLICY_MAX_LENGTH}
    return render(request, "participants/policy.html", {**context, **steps.heartbeat(participant)})


@participant_page("questionnaire")
def questionnaire_page(request: HttpRequest, participant: Participant) -> HttpResponse:
    items = participant.study.questionnaire
    errors: dict[str, str] = {}
    given: dict[str, list[str]] = {}
    if request.method == "POST":
        given = {key: request.POST.getlist(key) for key in request.POST if key.startswith("q_")}
        errors = steps.answer_questionnaire(participant, given)
        if not errors:
            return redirect(step_url(participant))
    shown = [
        {
            **item,
            "field": f"q_{item['id']}",
            "choices": questionnaire.choices_of(item),
            "given": given.get(f"q_{item['id']}", []),
            "error": errors.get(item["id"], ""),
        }
        for item in items
    ]
    context = {"participant": participant, "items": shown, "has_errors": bool(errors)}
    context.update(steps.heartbeat(participant))
    return render(
        request, "participants/questionnaire.html", context, status=400 if errors else 200
    )


@participant_page("debrief")
def debrief(request: HttpRequest, participant: Participant) -> HttpResponse:
    if request.method == "POST":
        steps.debrief_read(participant)
        return redirect(step_url(participant))
    debrief = steps.show_debrief_agents(participant, "debrief")
    context = {"participant": participant, "debrief_agents": debrief}
    return render(request, "participants/debrief.html", context)


@require_safe
def recruiter_return(request: HttpRequest, slug: str) -> HttpResponse:
    """A stand-in for the recruiter's completion page, for studies without a real recruiter (the
    demo): it shows the code that came back, and never whether it is one of the study's codes
    (that would let anyone try guesses until one is the finished code)."""
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        return not_found(request, _("There is no study at this address. Please check the link."))
    context = {"study": study, "code": request.GET.get("cc", "")[:64]}
    with override(study.language):
        return render(request, "participants/recruiter_return.html", context)


@participant_page("done")
def done(request: HttpRequest, participant: Participant) -> HttpResponse:
    code = participant.completion_code
    context = {
        "participant": participant,
        "code": code,
        "link": participant.study.completion_link(code) if code else "",
        # Turned away before playing: they return the study on the recruiter instead of a code.
        "return_statuses": ("declined", "failed_checks", "full"),
        "closed_for_now": participant.end_reason == assignment.CLOSED_FOR_NOW,
        "debrief_agents": steps.show_debrief_agents(participant, "done"),
        # What the page says is paid: someone who stopped before finishing a game is owed nothing
        # and must not read "you will be paid for it" above "You are paid 0.00".
        "owed": bool(participant.payment_amount or participant.bonus),
        "failed_questions": steps.failed_questions(participant),
    }
    return render(request, "participants/done.html", context)


@require_POST
@participant_page(None)
def alive(request: HttpRequest, participant: Participant) -> HttpResponse:
    """An answer page's heartbeat (static/js/alive.js): the person is there, writing. The
    wrapper notes it (``last_seen_at``), so the idle limit counts from here; nothing else."""
    return HttpResponse(status=204)


@participant_page(None)
def withdraw(request: HttpRequest, participant: Participant) -> HttpResponse:
    if participant.status not in Participant.ACTIVE:
        return redirect(step_url(participant))
    form = WithdrawForm(posted(request))
    if request.method == "POST" and form.is_valid():
        study = participant.study
        # asked before their games may be deleted
        debrief = steps.show_debrief_agents(participant, "withdrawn")
        code = rounds.withdraw(participant, delete_data=form.cleaned_data["delete_data"])
        context = {
            "debrief_agents": debrief,
            "participant": participant,
            "study": study,
            "code": code,
            "link": study.completion_link(code) if code else "",
            "deleted": form.cleaned_data["delete_data"],
        }
        return render(request, "participants/withdrawn.html", context)
    return render(request, "participants/withdraw.html", {"participant": participant, "form": form})
