"""A game night on the server's calendar, end to end: ``/night start
starts_in:`` puts the night in Discord's Scheduled Events when the bot may
(Manage Events), keeps the event in step (moved, started, ended or
cancelled), and reminds everyone who pressed *Remind me* or marked the event
*Interested* once, about 15 minutes ahead, pinging exactly them and the
organiser's role (never @everyone), also when the bot was down at that time.
Without the permission the night works as before and the organiser is told
which permission would add it."""
from __future__ import annotations

import datetime
import re
import time
from typing import Any

import discord
import pytest

from app.i18n.catalogue import t
from app.nights.host import REMIND_BEFORE
from tests.e2e import running_bot, updated
from tests.e2e.test_night import text_of
from tests.fakediscord.server import DEFAULT_BOT_PERMISSIONS

pytestmark = pytest.mark.timeout(240)

GAME = "11 nimmt!"
#: a minute lasts 0.05 s: a night 20 minutes ahead starts in 60 s, its reminder is due after 15 s
SCALE = 0.05
FAST = dict(computer_delay=0.01, time_scale=SCALE, table_seed=7)
MANAGE_EVENTS = DEFAULT_BOT_PERMISSIONS | discord.Permissions(manage_events=True).value


def night_id_of(signup: Any) -> int:
    join = re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])
    assert join, signup.buttons()
    return int(join[1])


def reminders(fd: Any, channel: Any) -> list[Any]:
    return [m for m in fd.messages(channel) if (m.content or "").startswith("⏰")]


async def test_a_night_on_the_calendar_reminds_who_asked_once_across_a_restart(world, tmp_path):
    fd = world.fd
    fd.set_role_permissions(world.guild.bot_role, MANAGE_EVENTS)
    regulars = fd.add_role(world.guild, "game-nights", mentionable=True)
    ana, ben, cleo, dan = (world.person(n) for n in ("ana", "ben", "cleo", "dan"))
    bystander = world.person("eve")
    fd.add_member(world.guild, cleo, roles=[regulars])
    db = tmp_path / "bot.db"
    async with running_bot(fd, db, world.guild, **FAST) as bot:
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", table_size=4, rounds=1, turn_time=1,
                           starts_in=20, remind_role=regulars)
        assert r.ack_type == 4 and not r.ephemeral
        signup = r.message
        night_id = night_id_of(signup)
        [event] = await fd.wait_for(lambda: fd.scheduled_events(world.guild))
        assert not r.followups  # in the calendar: nothing to add
        night = bot.nights.nights[night_id]
        assert event["entity_type"] == 3 and event["status"] == 1 and event["channel_id"] is None
        assert event["name"] == t("en", "nights.title", game=GAME)
        assert "#games" in event["entity_metadata"]["location"]
        assert f"https://discord.com/channels/{world.guild.id}/{world.channel.id}" in event["entity_metadata"]["location"]
        assert event["scheduled_start_time"].startswith(
            time.strftime("%Y-%m-%dT%H:%M", time.gmtime(night.next_at)))
        await fd.wait_for(lambda: f"https://discord.com/events/{world.guild.id}/{event['id']}" in signup.text())
        # sign-up is open from the moment the night is announced
        await updated(await fd.click(ben, signup, f"night:{night_id}:join"))
        r = await fd.click(ana, signup, f"night:{night_id}:remind")
        assert t("en", "nights.remind_on", minutes=15, when="X").split("(")[0] in text_of(r)
        r = await fd.click(eve := bystander, signup, f"night:{night_id}:remind")
        r = await fd.click(eve, signup, f"night:{night_id}:remind")  # changed their mind
        assert t("en", "nights.remind_off", when="X").split(".")[0] in text_of(r)
        fd.mark_interested(ben, event["id"])  # in Discord's own event list
        await fd.wait_for(lambda: t("en", "nights.reminder_due", minutes=15, count=2) in signup.text())
    fd.mark_interested(dan, event["id"])  # while the bot is down: Discord's list has it

    due = night.next_at - REMIND_BEFORE * SCALE
    await fd.wait_for(lambda: time.time() > due + 0.5, timeout=60)
    async with running_bot(fd, db, world.guild, **FAST) as bot:
        [reminder] = await fd.wait_for(lambda: reminders(fd, world.channel), timeout=20)
        assert f"<t:{int(night.next_at)}:R>" in reminder.content
        assert set(reminder.pinged) == {ana.id, ben.id, dan.id, cleo.id}  # and nobody else
        # exactly who asked and the role: no @everyone, no other role, no one else
        assert reminder.allowed_mentions == {"parse": [], "users": [ana.id, ben.id, dan.id], "roles": [regulars.id]}
        assert "@everyone" not in reminder.content
        await fd.wait_for(lambda: t("en", "nights.reminder_sent") in signup.text())
        assert not any(b["custom_id"] == f"night:{night_id}:remind" for b in signup.buttons())
        r = await fd.forge(ana, signup, f"night:{night_id}:remind")
        assert t("en", "nights.error_reminded_already") in text_of(r)
        # the organiser starts the round early: the event is active; the night ends: completed
        await updated(await fd.click(ana, signup, f"night:{night_id}:start"))
        await fd.wait_for(lambda: fd.scheduled_events(world.guild)[0]["status"] == 2, timeout=10)
        await fd.wait_for(lambda: t("en", "nights.status_ended") in signup.text(), timeout=90)
        await fd.wait_for(lambda: fd.scheduled_events(world.guild)[0]["status"] == 3, timeout=10)
    assert len(reminders(fd, world.channel)) == 1  # once, whatever restarted


async def test_without_manage_events_the_night_works_and_says_which_permission_adds_it(world, tmp_path):
    fd = world.fd
    ana, ben = world.person("ana"), world.person("ben")
    other = fd.add_channel(world.guild, "more-games")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", starts_in=30)
        assert r.ack_type == 4 and not r.ephemeral
        signup = r.message
        night_id = night_id_of(signup)
        [note] = await fd.wait_for(lambda: r.followups)
        assert note.ephemeral_to == ana.id and t("en", "nights.calendar_missing") in note.text()
        assert "Manage Events" in note.text()
        assert not fd.scheduled_events(world.guild)
        await updated(await fd.click(ben, signup, f"night:{night_id}:join"))
        assert "ben" in signup.text()
        r = await fd.click(ben, signup, f"night:{night_id}:remind")  # reminders work without the event
        assert r.ephemeral
        await fd.wait_for(lambda: t("en", "nights.reminder_due", minutes=15, count=1) in signup.text())

        # a night without a start time has no Remind me; a forged one is refused privately
        plain = (await fd.slash(ben, other, "night start", game="nimmt")).message
        plain_id = night_id_of(plain)
        assert not any(b["custom_id"].endswith(":remind") for b in plain.buttons())
        r = await fd.forge(ana, plain, f"night:{plain_id}:remind")
        assert t("en", "nights.error_no_start_time") in text_of(r)
        # a role without a start time, or @everyone, is refused before anything is made
        r = await fd.slash(ana, other, "night start", game="nimmt",
                           remind_role=world.guild.everyone)
        assert r.ephemeral and t("en", "nights.error_role_needs_time") in r.message.text()
        r = await fd.slash(ana, fd.add_channel(world.guild, "third"), "night start", game="nimmt", starts_in=5,
                           remind_role=world.guild.everyone)
        assert r.ephemeral and t("en", "nights.error_role_everyone") in r.message.text()


async def test_moving_and_cancelling_a_night_keeps_its_event_in_step(world, tmp_path):
    fd = world.fd
    fd.set_role_permissions(world.guild.bot_role, MANAGE_EVENTS)
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        signup = (await fd.slash(ana, world.channel, "night start", game="nimmt", starts_in=60)).message
        night_id = night_id_of(signup)
        [event] = await fd.wait_for(lambda: fd.scheduled_events(world.guild))
        first = event["scheduled_start_time"]
        r = await fd.slash(ben, world.channel, "night reschedule", starts_in=90)
        assert r.ephemeral and t("en", "nights.error_not_organiser") in r.message.text()
        r = await fd.slash(ana, world.channel, "night reschedule", starts_in=120)
        assert r.ephemeral and t("en", "nights.rescheduled", when="W", relative="R").split(" at")[0] in r.message.text()
        night = bot.nights.nights[night_id]
        moved = fd.scheduled_events(world.guild)[0]
        assert moved["scheduled_start_time"] != first and moved["status"] == 1
        assert moved["scheduled_start_time"].startswith(time.strftime("%Y-%m-%dT%H:%M", time.gmtime(night.next_at)))
        await fd.wait_for(lambda: f"<t:{int(night.next_at)}:F>" in signup.text())

        # the bot may no longer edit events: the night moves, the organiser hears why its event did not
        fd.set_role_permissions(world.guild.bot_role, DEFAULT_BOT_PERMISSIONS)
        r = await fd.slash(ana, world.channel, "night reschedule", starts_in=30)
        assert r.ephemeral and t("en", "nights.calendar_forbidden") in r.message.text()
        assert fd.scheduled_events(world.guild)[0]["scheduled_start_time"] == moved["scheduled_start_time"]
        fd.set_role_permissions(world.guild.bot_role, MANAGE_EVENTS)

        # cancelled before it began: the event is cancelled; a late Remind me is told the night is over
        r = await fd.click(ana, signup, f"night:{night_id}:end")
        await updated(r)
        await fd.wait_for(lambda: fd.scheduled_events(world.guild)[0]["status"] == 4, timeout=10)
        r = await fd.forge(ben, signup, f"night:{night_id}:remind")
        assert t("en", "nights.error_ended") in text_of(r)
        r = await fd.slash(ana, world.channel, "night reschedule", starts_in=30)
        assert r.ephemeral and t("en", "nights.error_no_night") in r.message.text()


def iso_at(moment: int, hours: int) -> str:
    """``moment`` written as a person in a zone ``hours`` from UTC writes it."""
    zone = datetime.timezone(datetime.timedelta(hours=hours))
    return datetime.datetime.fromtimestamp(moment, zone).strftime("%Y-%m-%d %H:%M") + f"{hours:+03d}:00"


async def test_a_night_set_for_a_time_is_on_the_calendar_reminds_and_starts_then(world, tmp_path):
    """``starts_at``: a date and time with its offset, or a pasted Discord timestamp; the
    sign-up, the event, the reminder and the first round all follow that moment.  A time
    without an offset (never guessed), in the past, too far ahead, unreadable, or given
    with ``starts_in`` too, is refused privately in the organiser's language."""
    fd = world.fd
    fd.set_role_permissions(world.guild.bot_role, MANAGE_EVENTS)
    ana, ben, cleo = world.person("ana"), world.person("ben"), world.person("cleo", locale="es-ES")
    scale = 0.02  # the reminder goes 18 s before the first round
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **dict(FAST, time_scale=scale)) as bot:
        now = int(time.time())
        refused = {
            "2026-12-05 20:00": t("en", "nights.error_time_no_offset", written="2026-12-05 20:00",
                                  example="2026-12-05 20:00+01:00"),
            "tomorrow at eight": t("en", "nights.error_time_unreadable"),
            f"<t:{now - 3600}:F>": t("en", "nights.error_time_past", at=now - 3600),
            str(now + 31 * 86400): t("en", "nights.error_time_too_far", at=now + 31 * 86400, days=30),
        }
        for given, text in refused.items():
            r = await fd.slash(ana, world.channel, "night start", game="nimmt", starts_at=given)
            assert r.ephemeral and r.message.text() == text, given
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", starts_at=f"<t:{now + 600}>", starts_in=10)
        assert r.ephemeral and t("en", "nights.error_two_times") in r.message.text()
        r = await fd.slash(cleo, world.channel, "night start", game="nimmt", starts_at="2026-12-05 20:00")
        assert r.ephemeral and "2026-12-05 20:00+01:00" in r.message.text()
        assert t("es", "nights.error_time_no_offset", written="2026-12-05 20:00",
                 example="2026-12-05 20:00+01:00") == r.message.text()
        assert not fd.messages(world.channel) and not fd.scheduled_events(world.guild)  # nothing was opened

        # planned in the afternoon for the evening, written in the organiser's own offset
        planned = (now + 3 * 3600) // 60 * 60
        r = await fd.slash(ana, world.channel, "night start", game="nimmt", table_size=2, rounds=1, turn_time=1,
                           starts_at=iso_at(planned, -5))
        assert r.ack_type == 4 and not r.ephemeral
        signup = r.message
        night_id = night_id_of(signup)
        night = bot.nights.nights[night_id]
        assert night.next_at == planned
        assert f"<t:{planned}:F>" in signup.text() and f"<t:{planned}:R>" in signup.text()
        [event] = await fd.wait_for(lambda: fd.scheduled_events(world.guild))
        assert datetime.datetime.fromisoformat(event["scheduled_start_time"]).timestamp() == planned

        # moved to a pasted Discord timestamp: sign-up, event, reminder and first round follow it
        r = await fd.slash(ana, world.channel, "night reschedule", starts_at=f"<t:{planned}>", starts_in=5)
        assert r.ephemeral and t("en", "nights.error_two_times") in r.message.text()
        r = await fd.slash(ana, world.channel, "night reschedule")
        assert r.ephemeral and t("en", "nights.error_no_time") in r.message.text()
        soon = int(time.time()) + 30
        r = await fd.slash(ana, world.channel, "night reschedule", starts_at=f"<t:{soon}:F>")
        assert r.ephemeral and r.message.text() == t("en", "nights.rescheduled", when=f"<t:{soon}:F>",
                                                     relative=f"<t:{soon}:R>")
        assert night.next_at == soon
        moved = fd.scheduled_events(world.guild)[0]
        assert datetime.datetime.fromisoformat(moved["scheduled_start_time"]).timestamp() == soon
        await fd.wait_for(lambda: f"<t:{soon}:F>" in signup.text())
        await updated(await fd.click(ben, signup, f"night:{night_id}:join"))
        r = await fd.click(ben, signup, f"night:{night_id}:remind")
        assert f"<t:{soon}:R>" in text_of(r)
        [reminder] = await fd.wait_for(lambda: reminders(fd, world.channel), timeout=30)
        assert f"<t:{soon}:R>" in reminder.content and set(reminder.pinged) == {ben.id}
        assert time.time() >= soon - REMIND_BEFORE * scale
        assert time.time() < soon  # not late: the reminder came before the round
        # the first round starts by itself at that moment: tables, and the event is active
        await fd.wait_for(lambda: night.round == 1, timeout=40)
        assert time.time() >= soon
        await fd.wait_for(lambda: fd.scheduled_events(world.guild)[0]["status"] == 2, timeout=10)
        await fd.wait_for(lambda: t("en", "nights.status_playing", round=1) in signup.text(), timeout=10)
        assert len(reminders(fd, world.channel)) == 1
        r = await fd.forge(cleo, signup, f"night:{night_id}:remind")  # too late: said so, privately
        assert t("es", "nights.error_remind_started") in text_of(r)


async def test_a_reminder_for_more_people_than_one_message_pings_them_all_and_a_refused_end_is_told(world, tmp_path):
    """Past 80 pings a reminder goes out in several messages, each its own (Discord posts one
    message per nonce), and everyone who asked is pinged exactly once.  Ending a night whose
    event the bot may no longer edit: the night ends, the organiser hears why its event did not."""
    fd = world.fd
    fd.set_role_permissions(world.guild.bot_role, MANAGE_EVENTS)
    ana = world.person("ana")
    crowd = [world.person(f"fan{i}") for i in range(85)]
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        signup = (await fd.slash(ana, world.channel, "night start", game="nimmt", starts_in=20)).message
        night_id = night_id_of(signup)
        [event] = await fd.wait_for(lambda: fd.scheduled_events(world.guild))
        for fan in crowd:
            fd.mark_interested(fan, event["id"])
        await fd.wait_for(lambda: len(bot.nights.nights[night_id].interested) == len(crowd), timeout=20)
        sent = await fd.wait_for(lambda: (lambda r: r if sum(len(m.pinged) for m in r) >= len(crowd) else None)(
            reminders(fd, world.channel)), timeout=40)
        assert len(sent) == 2
        pinged = [u for m in sent for u in m.pinged]
        assert sorted(pinged) == sorted(fan.id for fan in crowd)  # each once
        assert all(len(m.content) <= 2000 for m in sent)
        await fd.wait_for(lambda: t("en", "nights.reminder_sent") in signup.text())

        fd.set_role_permissions(world.guild.bot_role, DEFAULT_BOT_PERMISSIONS)
        r = await fd.click(ana, signup, f"night:{night_id}:end")
        await updated(r)
        [note] = await fd.wait_for(lambda: r.followups, timeout=10)
        assert note.ephemeral_to == ana.id and t("en", "nights.calendar_forbidden") in note.text()
        await fd.wait_for(lambda: t("en", "nights.status_ended") in signup.text())
        assert fd.scheduled_events(world.guild)[0]["status"] == 1  # Discord refused: as it was
    assert len(reminders(fd, world.channel)) == len(sent)


async def test_a_first_round_that_cannot_start_at_its_time_shows_the_night_on_and_tells_the_organiser(world, tmp_path):
    """Too few signed up when the time comes: the round does not start, and the event,
    which Discord would otherwise leave scheduled in the past, shows the night happening
    (its sign-up is open); the organiser alone is pinged in the channel with why and
    what to do.  The night goes on: it ends with its event completed."""
    fd = world.fd
    fd.set_role_permissions(world.guild.bot_role, MANAGE_EVENTS)
    ana = world.person("ana")  # signed up alone
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST) as bot:
        signup = (await fd.slash(ana, world.channel, "night start", game="nimmt", starts_in=1)).message
        night_id = night_id_of(signup)
        [event] = await fd.wait_for(lambda: fd.scheduled_events(world.guild))
        assert event["status"] == 1
        why = t("en", "nights.error_too_few", min=2)
        told = await fd.wait_for(lambda: next((m for m in fd.messages(world.channel) if why in m.text()), None),
                                 timeout=20)
        assert told.text() == t("en", "nights.first_missed", organiser=f"<@{ana.id}>", why=why,
                                start=t("en", "nights.start_round"))
        assert told.pinged == [ana.id]
        await fd.wait_for(lambda: fd.scheduled_events(world.guild)[0]["status"] == 2, timeout=10)
        night = bot.nights.nights[night_id]
        assert night.round == 0 and night.next_at is None and night.event_status == "active"
        await updated(await fd.click(ana, signup, f"night:{night_id}:end"))
        await fd.wait_for(lambda: fd.scheduled_events(world.guild)[0]["status"] == 3, timeout=10)
        assert len([m for m in fd.messages(world.channel) if why in m.text()]) == 1  # told once


async def test_an_event_the_bot_may_no_longer_edit_is_not_asked_again_at_every_change(world, tmp_path):
    """The bot lost Manage Events: its first refused change of the night's event (the round
    starting) is remembered, so the night's later changes (people joining) do not ask
    Discord again (each refusal counts towards its invalid-request limit); the sign-up
    says what the bot is missing.  Given the permission back, the event catches up at once
    and the line goes."""
    fd = world.fd
    fd.set_role_permissions(world.guild.bot_role, MANAGE_EVENTS)
    ana, ben, cleo, dan, eve = (world.person(n) for n in ("ana", "ben", "cleo", "dan", "eve"))
    stuck = t("en", "nights.calendar_stuck")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        signup = (await fd.slash(ana, world.channel, "night start", game="nimmt", table_size=2, rounds=1,
                                 turn_time=600, starts_in=60)).message
        night_id = night_id_of(signup)
        [event] = await fd.wait_for(lambda: fd.scheduled_events(world.guild))
        await updated(await fd.click(ben, signup, f"night:{night_id}:join"))
        route = rf"/guilds/{world.guild.id}/scheduled-events/{event['id']}"

        def edits() -> list[int]:
            return [r.status for r in fd.requests if r.method == "PATCH" and re.fullmatch(route, r.path)]

        fd.set_role_permissions(world.guild.bot_role, DEFAULT_BOT_PERMISSIONS)
        await updated(await fd.click(ana, signup, f"night:{night_id}:start"))
        await fd.wait_for(lambda: stuck in signup.text(), timeout=10)
        assert edits() == [403]
        for person in (cleo, dan, eve):  # the night changes again and again
            await updated(await fd.click(person, signup, f"night:{night_id}:join"))
        await fd.wait_for(lambda: all(p.name in signup.text() for p in (cleo, dan, eve)), timeout=10)
        await updated(await fd.click(dan, signup, f"night:{night_id}:leave"))
        await fd.wait_for(lambda: dan.name not in signup.text(), timeout=10)
        assert edits() == [403]  # not asked again
        assert fd.scheduled_events(world.guild)[0]["status"] == 1

        fd.set_role_permissions(world.guild.bot_role, MANAGE_EVENTS)
        await fd.wait_for(lambda: fd.scheduled_events(world.guild)[0]["status"] == 2, timeout=10)
        await fd.wait_for(lambda: stuck not in signup.text(), timeout=10)
        assert edits() == [403, 200]


async def test_an_event_change_discord_failed_is_tried_again_by_itself(world, tmp_path):
    """Discord fails the round's start on the night's event four times (503): the bot tries it
    again by itself, waiting longer each time, and the event shows the night happening
    without waiting for the night's next change."""
    fd = world.fd
    fd.set_role_permissions(world.guild.bot_role, MANAGE_EVENTS)
    ana, ben = world.person("ana"), world.person("ben")
    async with running_bot(fd, tmp_path / "bot.db", world.guild, **FAST):
        signup = (await fd.slash(ana, world.channel, "night start", game="nimmt", table_size=2, rounds=1,
                                 turn_time=600, starts_in=60)).message
        night_id = night_id_of(signup)
        [event] = await fd.wait_for(lambda: fd.scheduled_events(world.guild))
        assert (await fd.click(ben, signup, f"night:{night_id}:join")).ack_type == 7
        route = rf"/guilds/{world.guild.id}/scheduled-events/{event['id']}"
        fd.fail_next("PATCH", route + "$", status=503, times=4)
        assert (await fd.click(ana, signup, f"night:{night_id}:start")).ack_type == 7
        await fd.wait_for(lambda: fd.scheduled_events(world.guild)[0]["status"] == 2, timeout=30)
        assert [r.status for r in fd.requests if r.method == "PATCH" and re.fullmatch(route, r.path)] == [503] * 4 + [200]
        assert t("en", "nights.calendar_stuck") not in signup.text()  # (a 5xx is not the bot's permission)
