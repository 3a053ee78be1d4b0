"""Group randomisation: in a design with several people at a table, the people who meet in the
first round's lobby form a group, and the group (not each person) is drawn a condition."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone
from participant_helpers import page
from test_study_designs import AGENT, PERSON, make_study, play_out, ready

from studyapp.dashboard.records import participants_frame
from studyapp.participants import design, table_study
from studyapp.participants.models import Condition, Participant, Study, StudyGroup
from studyapp.participants.rounds import current_round
from studyapp.tables import driver
from studyapp.tables.models import Table

TWO = [PERSON, PERSON, AGENT, AGENT, AGENT]
ONE = [PERSON, AGENT, AGENT, AGENT, AGENT]
DESCRIPTOR = {"kind": "agent", "spec": "offline:descriptor"}


def person_key(client) -> str:
    return client.session.session_key


def arms(study: Study, *designs: tuple[str, list], quota: int = 0, group_quota: int = 0) -> None:
    for position, (name, seats) in enumerate(designs):
        Condition.objects.create(
            study=study,
            name=name,
            quota=quota,
            group_quota=group_quota,
            position=position,
            overrides={"design": {"seats": seats}},
        )


def fresh(participant: Participant) -> Participant:
    participant.refresh_from_db()
    return participant


def test_two_people_who_arrive_together_sit_at_one_table_in_one_condition(client_factory):
    """The must-reach: a two-condition study of two people per table; both open the link within
    the lobby's wait, and meet."""
    study = make_study(rounds=1, assignment_seed=3)
    arms(study, ("kb", TWO), ("descriptor", [PERSON, PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    alice, bob = client_factory(), client_factory()
    first, second = ready(alice, study), ready(bob, study)
    assert (first.condition, second.condition) == ("", "")  # nothing drawn per person
    alice.post(page(first, "play"))
    lobby = current_round(first).table
    assert lobby.status == Table.Status.LOBBY and lobby.options["group_lobby"]
    bob.post(page(second, "play"))  # the same lobby (one per study and round): now full
    lobby.refresh_from_db()
    assert lobby.status == Table.Status.ABORTED and lobby.options["group_formed"] == 1
    first, second = fresh(first), fresh(second)
    assert first.condition == second.condition != ""
    assert first.group_id == second.group_id is not None
    table = current_round(first).table
    assert current_round(second).table_id == table.pk != lobby.pk
    assert table.status == Table.Status.PLAYING
    assert table_study.of(table).condition == first.condition and table_study.of(table).group == 1
    holders = {s.index: s.session_key for s in table.seats.order_by("index")}
    places = table.options["person_seats"]  # where the drawn seat order put the person slots
    assert {holders[i] for i in places} == {alice.session.session_key, bob.session.session_key}
    # The lobby page sends each browser on, and Continue leads to the shared table.
    board = alice.get(reverse("tables:table", args=[lobby.pk])).content.decode()
    assert 'id="group-formed"' in board and "data-follow" in board
    # Staff watching the lobby are not sent on to a participant's Continue (issue 31: they
    # followed it to "Not found").
    staff = client_factory()
    staff.force_login(User.objects.create_superuser("watcher", "w@example.org", "pw"))
    watched = staff.get(reverse("tables:table", args=[lobby.pk])).content.decode()
    assert 'id="group-formed"' in watched and "data-follow" not in watched
    assert 'id="group-tables"' in watched
    assert 'id="my-word"' not in board  # the lobby's game is never shown
    response = bob.get(reverse("participants:continue", args=[study.slug]))
    assert response.status_code == 302 and response.url == reverse("tables:table", args=[table.pk])
    group = StudyGroup.objects.get(study=study)
    assert (group.size, group.condition, group.lobby_table) == (2, first.condition, lobby.pk)
    assert group.assignment["unit"] == "group" and group.assignment["seed"] == 3
    assert first.assignment == {**group.assignment, "group": 1}
    play_out(table.pk)
    for client, person in ((alice, first), (bob, second)):
        client.get(page(person, "play"))
        assert fresh(person).status == Participant.Status.FINISHED
    frame = participants_frame([fresh(first), fresh(second)])
    assert list(frame["randomisation_unit"]) == ["group", "group"]
    assert list(frame["group"]) == [1, 1]
    assert list(frame["condition"]) == [first.condition] * 2


def test_groups_are_drawn_in_balanced_seeded_blocks(client_factory):
    """Four pairs: every block of two groups holds each condition once, as the seed orders it."""
    study = make_study(rounds=1, assignment_seed=11)
    arms(study, ("a", TWO), ("b", [PERSON, PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    drawn = []
    for _ in range(4):
        pair = [(c, ready(c, study)) for c in (client_factory(), client_factory())]
        for client, person in pair:
            client.post(page(person, "play"))
        conditions = {fresh(person).condition for _, person in pair}
        assert len(conditions) == 1
        drawn.append(conditions.pop())
    assert sorted(drawn[:2]) == ["a", "b"] and sorted(drawn[2:]) == ["a", "b"]
    groups = list(StudyGroup.objects.filter(study=study).order_by("number"))
    assert [g.condition for g in groups] == drawn
    assert [g.assignment["group_index"] for g in groups] == [0, 1, 2, 3]
    from studyapp.participants.assignment import block_order

    assert [g.assignment["order"] for g in groups[:2]] == [block_order(11, 0, ["a", "b"])] * 2


def test_a_pair_drawn_into_a_one_person_arm_plays_at_two_tables_of_that_arm(client_factory):
    """The demo's design: two people per table, or one. A pair is one group in one condition
    either way; a one-person arm seats each member at a table of their own."""
    seen = set()
    for seed in range(6):
        study = make_study(slug=f"uc{seed}", rounds=1, assignment_seed=seed)
        arms(study, ("two-people", TWO), ("one-person", ONE))
        pair = [(c, ready(c, study)) for c in (client_factory(), client_factory())]
        for client, person in pair:
            client.post(page(person, "play"))
        people = [fresh(person) for _, person in pair]
        condition = people[0].condition
        assert people[1].condition == condition and people[0].group_id == people[1].group_id
        tables = [current_round(person).table for person in people]
        assert all(t.status == Table.Status.PLAYING for t in tables)
        # the seats in design-slot order (each table draws which slot sits where)
        kinds = [
            [
                s.kind
                for _, s in sorted(
                    zip(table_study.of(t).seat_slots, t.seats.order_by("index"), strict=True)
                )
            ]
            for t in tables
        ]
        if condition == "two-people":
            assert tables[0].pk == tables[1].pk and kinds[0] == ["human"] * 2 + ["agent"] * 3
        else:
            assert tables[0].pk != tables[1].pk
            assert kinds == [["human"] + ["agent"] * 4] * 2
        seen.add(condition)
    assert seen == {"two-people", "one-person"}


def test_a_group_forms_at_the_wait_limit_with_whoever_came(client_factory):
    study = make_study(rounds=1)
    arms(study, ("kb", TWO), ("descriptor", [PERSON, PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    client = client_factory()
    person = ready(client, study)
    client.post(page(person, "play"))
    lobby = current_round(person).table
    assert driver.check_lobby(lobby.pk) == "early"
    Table.objects.filter(pk=lobby.pk).update(created_at=timezone.now() - timedelta(seconds=61))
    assert driver.check_lobby(lobby.pk) == "group formed"
    person = fresh(person)
    table = current_round(person).table
    seats = list(table.seats.order_by("index"))
    places = table.options["person_seats"]  # the seats the drawn order gave the person slots
    slots = table_study.of(table).seat_slots
    assert sorted(slots[i] for i in places) == [0, 1]
    filled = [seats[i] for i in places if seats[i].session_key != person_key(client)]
    mine = [seats[i] for i in places if seats[i].session_key == person_key(client)]
    assert len(mine) == 1 and mine[0].kind == "human"
    assert len(filled) == 1 and filled[0].kind == "agent"  # the replacement agent
    assert StudyGroup.objects.get(study=study).size == 1
    # A latecomer opens a new lobby; the closed one takes nobody.
    late_client = client_factory()
    late = ready(late_client, study)
    late_client.post(page(late, "play"))
    assert current_round(late).table_id not in (lobby.pk, table.pk)


def test_quotas_count_people_and_groups(client_factory):
    study = make_study(rounds=1)
    arms(study, ("kb", TWO), ("descriptor", [PERSON, PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    Condition.objects.filter(study=study).update(group_quota=1)
    for _ in range(2):
        pair = [(c, ready(c, study)) for c in (client_factory(), client_factory())]
        for client, person in pair:
            client.post(page(person, "play"))
    assert sorted(StudyGroup.objects.values_list("condition", flat=True)) == ["descriptor", "kb"]
    response = client_factory().get(reverse("participants:study_link", args=[study.slug]))
    assert b"This study is full" in response.content  # each arm has its one group
    # People count too: a quota of 3 people leaves no room for a second pair in either arm.
    other = make_study(slug="uc-people", rounds=1)
    arms(other, ("kb", TWO), ("descriptor", [PERSON, PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    Condition.objects.filter(study=other).update(quota=3)
    for _ in range(2):
        pair = [(c, ready(c, other)) for c in (client_factory(), client_factory())]
        for client, person in pair:
            client.post(page(person, "play"))
    third = [(c, ready(c, other)) for c in (client_factory(), client_factory())]
    for client, person in third:
        client.post(page(person, "play"))
    assert {fresh(person).status for _, person in third} == {Participant.Status.FULL}
    assert StudyGroup.objects.filter(study=other).count() == 2


def test_single_person_designs_keep_per_person_assignment(client_factory):
    study = make_study(rounds=1, design={"seats": ONE})
    arms(study, ("kb", ONE), ("descriptor", [PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    assert not design.is_group_design(study)
    person = ready(client_factory(), study)
    assert person.condition in ("kb", "descriptor") and person.assignment["unit"] == "person"
    assert participants_frame([person])["randomisation_unit"][0] == "person"


def test_someone_who_leaves_the_lobby_starts_the_round_again(client_factory):
    study = make_study(rounds=1)
    arms(study, ("kb", TWO), ("descriptor", [PERSON, PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    alice, bob = client_factory(), client_factory()
    first, second = ready(alice, study), ready(bob, study)
    alice.post(page(first, "play"))
    lobby = current_round(first).table
    response = alice.post(reverse("tables:leave", args=[lobby.pk]))
    assert response.url == reverse("participants:continue", args=[study.slug])
    assert current_round(first) is None  # the round went with the place
    bob.post(page(second, "play"))  # takes the place alice left
    assert fresh(second).group_id is None
    alice.post(page(first, "play"))  # comes back: the lobby is full, the group forms
    first, second = fresh(first), fresh(second)
    assert first.group_id == second.group_id is not None
    assert current_round(first).table_id == current_round(second).table_id
    assert StudyGroup.objects.get(study=study).size == 2


def test_a_group_too_small_for_its_arm_leaves_with_the_lobby_code_under_exit(client_factory):
    study = make_study(rounds=1)
    study.design = {**study.design, "lobby_timeout": "exit"}
    study.save()
    arms(study, ("kb", TWO), ("descriptor", [PERSON, PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    client = client_factory()
    person = ready(client, study)
    client.post(page(person, "play"))
    lobby = current_round(person).table
    Table.objects.filter(pk=lobby.pk).update(created_at=timezone.now() - timedelta(seconds=61))
    assert driver.check_lobby(lobby.pk) == "group formed"
    person = fresh(person)
    assert person.status == Participant.Status.LOBBY_TIMEOUT and person.group is not None
    response = client.get(reverse("participants:continue", args=[study.slug]), follow=True)
    assert b"UCWAIT" in response.content


def test_staff_see_each_group_and_its_draw_read_only(client_factory, staff):
    study = make_study(rounds=1)
    arms(study, ("kb", TWO), ("descriptor", [PERSON, PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    pair = [(c, ready(c, study)) for c in (client_factory(), client_factory())]
    for client, person in pair:
        client.post(page(person, "play"))
    group = StudyGroup.objects.get(study=study)
    listing = staff.get(reverse("admin:participants_studygroup_changelist")).content.decode()
    assert group.condition in listing
    detail = staff.get(reverse("admin:participants_studygroup_change", args=[group.pk]))
    assert detail.status_code == 200 and "group_index" in detail.content.decode()
    assert staff.get(reverse("admin:participants_studygroup_add")).status_code == 403
    member = staff.get(reverse("admin:participants_participant_change", args=[pair[0][1].pk]))
    assert str(group) in member.content.decode()


def test_a_blinded_groups_first_table_holds_its_drawn_while_as_every_table_does(client_factory):
    """Issue 48: a blinded study's round-1 group tables recorded their start delay and started the
    moment the group formed, while later rounds' tables waited theirs (a timing tell). They open
    full, as lobbies, and start when the hold ends."""
    study = make_study(rounds=1, assignment_seed=3, agents_disclosed=False)
    arms(study, ("kb", TWO), ("descriptor", [PERSON, PERSON, DESCRIPTOR, DESCRIPTOR, DESCRIPTOR]))
    alice, bob = client_factory(), client_factory()
    first, second = ready(alice, study), ready(bob, study)
    alice.post(page(first, "play"))
    bob.post(page(second, "play"))  # the group forms
    table = current_round(fresh(first)).table
    hold = table.options["start_after_seconds"]
    assert 5 <= hold <= 45
    assert table.status == Table.Status.LOBBY and not table.turns.exists()
    assert all(not seat.is_vacant for seat in table.seats.all())  # full, holding
    assert driver.check_lobby(table.pk) == "early"
    Table.objects.filter(pk=table.pk).update(created_at=timezone.now() - timedelta(seconds=hold))
    assert driver.check_lobby(table.pk) == "started"
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
