"""A game night on the server's calendar, end to end: ``/night start
starts_in:`` puts the night in Discord's Scheduled Events when the bot may
(Manage Events), keeps the event in step (moved, started, ended or
cancelled), and reminds everyone who pressed *Remind me* or marked the event
*Interested* once, about 15 minutes ahead, pinging exactly them and the
organiser's role (never @everyone), also when the bot was down at that time.
Without the permission the night works as before and the organiser is told
which permission would add it."""
from __future__ import annotations

import re
import time
from typing import Any

import discord
import pytest

from app.i18n.catalogue import t
from app.nights.host import REMIND_BEFORE
from tests.e2e import running_bot
from tests.e2e.test_night import text_of
from tests.fakediscord.server import DEFAULT_BOT_PERMISSIONS

pytestmark = pytest.mark.timeout(240)

GAME = "11 nimmt!"
#: a minute lasts 0.05 s: a night 20 minutes ahead starts in 60 s, its reminder is due after 15 s
SCALE = 0.05
FAST = dict(computer_delay=0.01, time_scale=SCALE, table_seed=7)
MANAGE_EVENTS = DEFAULT_BOT_PERMISSIONS | discord.Permissions(manage_events=True).value


def night_id_of(signup: Any) -> int:
    return int(re.match(r"night:(\d+):join", signup.buttons()[0]["custom_id"])[1])


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
        assert (await fd.click(ben, signup, f"night:{night_id}:join")).ack_type == 7
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
        assert (await fd.click(ana, signup, f"night:{night_id}:start")).ack_type == 7
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
        assert (await fd.click(ben, signup, f"night:{night_id}:join")).ack_type == 7
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
        assert r.ack_type == 7
        await fd.wait_for(lambda: fd.scheduled_events(world.guild)[0]["status"] == 4, timeout=10)
        r = await fd.forge(ben, signup, f"night:{night_id}:remind")
        assert t("en", "nights.error_ended") in text_of(r)
        r = await fd.slash(ana, world.channel, "night reschedule", starts_in=30)
        assert r.ephemeral and t("en", "nights.error_no_night") in r.message.text()
