"""After the game: the verifiable shuffle (``/verify``, the commitment on the
table message, the seed in the final standings), **Replay** of a finished
game with every hand, and ``/versus`` head-to-head records.

Thin like every cog: the commitment and its check live in :mod:`app.after.verify`,
the step-through in :mod:`app.after.replay`, the head-to-head figures in
``Store.versus``.  Everything works for any engine through the protocol
(the manager's ``games`` registry, ``new``/``apply``/``view``) and each
game's own UI (its ``table_message`` draws a replayed table, its ``narrate``
tells a replayed move), so no game is named here.  Replays and checks run
in worker threads.
"""
from __future__ import annotations

import asyncio
import io
import logging
import re
from dataclasses import dataclass
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import locale_str as _
from discord.ext import commands

from app.after import replay
from app.after import verify
from app.i18n.catalogue import has, t
from app.tables.manager import Seat, Table
from app.text import plain
from cogs.stats import GAME_CHOICES
from cogs.common.parts import parts
from cogs.common.ui import decimal, on_own_private_message, reply, user_lang
from cogs.guard import ID_PATTERN
from cogs.tables.game_ui import variant_line
from core import registry
from core.protocol import GameError

log = logging.getLogger(__name__)

NO_PINGS = discord.AllowedMentions.none()
JUMP = 10  # steps of the << / >> buttons


# ----------------------------------------------------------------------------- components
class ShuffleButton(discord.ui.DynamicItem[discord.ui.Button], template=rf"shuf:(?P<table>{ID_PATTERN})"):
    """On a table message: the full commitment (and, once over, the seed)."""

    def __init__(self, table_id: int, label: str = "-") -> None:
        super().__init__(discord.ui.Button(label=label[:80], emoji="🔒", row=4, custom_id=f"shuf:{table_id}"))
        self.table_id = table_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /):
        return cls(int(match["table"]), getattr(item, "label", None) or "-")

    async def callback(self, interaction: discord.Interaction) -> None:
        cog = parts(interaction.client).after
        await cog.show_verification(interaction, table_id=self.table_id)


class VerifyButton(discord.ui.DynamicItem[discord.ui.Button], template=rf"vrfy:(?P<game>{ID_PATTERN})"):
    """Under the final standings and in /history: run /verify on that game."""

    def __init__(self, game_id: int, label: str = "-") -> None:
        super().__init__(discord.ui.Button(label=label[:80], emoji="✅", custom_id=f"vrfy:{game_id}"))
        self.game_id = game_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /):
        return cls(int(match["game"]), getattr(item, "label", None) or "-")

    async def callback(self, interaction: discord.Interaction) -> None:
        cog = parts(interaction.client).after
        await cog.show_verification(interaction, game_id=self.game_id)


class ReplayButton(discord.ui.DynamicItem[discord.ui.Button],
                   template=rf"rply:(?P<game>{ID_PATTERN}):(?P<step>\d{{1,7}}):(?P<tag>[a-z])"):
    """Replay: tag ``o`` opens a private replay at the step; the others
    (first, back, previous, next, forward, last, round back/forward) move an
    open one.  The tag keeps custom_ids unique when two buttons lead to the
    same step."""

    def __init__(self, game_id: int, step: int, tag: str, label: str = "-", *, disabled: bool = False,
                 emoji: str | None = None, row: int | None = None,
                 style: discord.ButtonStyle = discord.ButtonStyle.secondary) -> None:
        super().__init__(discord.ui.Button(label=label[:80], disabled=disabled, emoji=emoji, row=row, style=style,
                                           custom_id=f"rply:{game_id}:{step}:{tag}"))
        self.game_id, self.step, self.tag = game_id, step, tag

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /):
        return cls(int(match["game"]), int(match["step"]), match["tag"], getattr(item, "label", None) or "-")

    async def callback(self, interaction: discord.Interaction) -> None:
        cog = parts(interaction.client).after
        await cog.show_replay(interaction, self.game_id, self.step, edit=self.tag != "o")


# ----------------------------------------------------------------------------- loading
@dataclass
class Recorded:
    """A finished game as stored: its record, its table row, its log."""

    game_id: int
    detail: dict[str, Any]
    record: Any  # app.store.TableRecord
    seats: list[Seat]
    log: list[tuple[int, str]]
    options: dict[str, Any]


class AfterCog(commands.Cog, name="After"):
    def __init__(self, bot: Any) -> None:
        self.bot = bot

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(ShuffleButton, VerifyButton, ReplayButton)
        parts(self.bot).loaded_after = self
        tables = parts(self.bot).loaded_tables
        if tables is not None:
            tables.extras.append(self)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(ShuffleButton, VerifyButton, ReplayButton)
        if parts(self.bot).loaded_after is self:
            parts(self.bot).loaded_after = None
        tables = parts(self.bot).loaded_tables
        if tables is not None and self in tables.extras:
            tables.extras.remove(self)

    def engine(self, game: str) -> Any:
        return self.bot.tables.games[game]

    def ui(self, game: str) -> Any:
        return parts(self.bot).tables.uis[game]

    def options_of(self, record: Any, seats: list[Seat]) -> dict[str, Any]:
        shuffle = record.meta.get("shuffle") or {}
        if "options" in shuffle:
            return dict(shuffle["options"])
        # a game from before commitments: the options as the manager derives them
        table = self.table_like(record, seats, [], "en")
        return self.bot.tables.engine_options(table)

    @staticmethod
    def table_like(record: Any, seats: list[Seat], log: list[tuple[int, str]], lang: str,
                   engine: Any = None) -> Table:
        """A closed table as the game UIs draw and narrate it (nothing to click)."""
        meta = record.meta
        return Table(id=record.id, guild_id=record.guild_id, channel_id=record.channel_id, game=record.game,
                     host_id=meta.get("host_id", 0), max_seats=meta.get("max_seats", len(seats)),
                     options=dict(meta.get("options", {})), locale=lang, status="finished", seats=seats,
                     seed=meta.get("seed"), shuffle=dict(meta.get("shuffle") or {}), log=list(log),
                     engine=engine)

    async def missing(self, game_id: int, lang: str) -> str:
        """Why a game cannot be loaded: unknown, or recorded without its moves."""
        known = await self.bot.store.game_detail(game_id) is not None
        return t(lang, "after.no_moves" if known else "stats.no_such_game", id=game_id)

    async def load(self, game_id: int) -> Recorded | None:
        store = self.bot.store
        detail = await store.game_detail(game_id)
        if detail is None:
            return None
        record = await store.table(detail["table_id"])
        if record is None or record.game not in self.bot.tables.games:
            return None
        seats = [Seat.from_dict(s) for s in record.meta.get("seats", [])]
        return Recorded(game_id, detail, record, seats, list(record.actions), self.options_of(record, seats))

    # ------------------------------------------------------------- hooks of the table cog
    def table_message(self, table: Table, message: Any, lang: str) -> None:
        """The commitment under every table message (the seed once it is over)."""
        digest = table.shuffle.get("sha256")
        if not digest:
            return
        if table.status == "finished":
            text = t(lang, "after.footer_revealed", short=verify.short(digest), seed=table.seed)
        else:
            text = t(lang, "after.footer_commitment", short=verify.short(digest))
        message.footer.append(text)
        if table.status != "playing":
            return  # the final table message keeps no buttons; the standings carry Verify
        if message.view is None:
            message.view = discord.ui.View(timeout=None)
        message.view.add_item(ShuffleButton(table.id, t(lang, "after.shuffle_button")))

    def narrate(self, table: Table, events: list[dict[str, Any]], lang: str) -> list[str]:
        """The thread keeps the full commitment from the start (a message that is
        never edited) and the revealed seed at the end."""
        digest = table.shuffle.get("sha256")
        if not digest:
            return []
        if any(e.get("type") == "started" for e in events):
            return [t(lang, "after.narrate_commitment", sha=digest)]
        if table.status == "finished" and table.engine is not None and table.engine.over:
            return [t(lang, "after.narrate_revealed", seed=table.seed, nonce=table.shuffle["nonce"])]
        return []

    async def standings(self, table: Table, embed: discord.Embed, view: discord.ui.View) -> None:
        """The final standings reveal the seed; Replay and Verify sit under them."""
        lang = table.locale
        shuffle = table.shuffle
        if shuffle.get("sha256") and table.seed is not None:
            embed.add_field(name=t(lang, "after.shuffle_title"), inline=False, value=t(
                lang, "after.revealed", seed=table.seed, nonce=shuffle["nonce"], sha=shuffle["sha256"]))
        game_id = await self.bot.store.game_of_table(table.id)
        if game_id is not None:
            for item in self.game_buttons(game_id, lang):
                view.add_item(item)

    def game_buttons(self, game_id: int, lang: str) -> list[discord.ui.Item]:
        return [ReplayButton(game_id, 0, "o", t(lang, "after.replay_button"), emoji="⏯️"),
                VerifyButton(game_id, t(lang, "after.verify_button"))]

    def game_view(self, game_id: int, lang: str) -> discord.ui.View:
        """Replay and Verify for a recorded game (``/history`` shows them)."""
        view = discord.ui.View(timeout=None)
        for item in self.game_buttons(game_id, lang):
            view.add_item(item)
        return view

    # -------------------------------------------------------------------------- /verify
    @app_commands.command(name=_("verify", key="commands.verify.name"),
                          description=_("Check that a game's shuffle was fixed before the first move",
                                        key="commands.verify.description"))
    @app_commands.rename(game=_("game", key="commands.opt_game.name"), table=_("table", key="commands.opt_table.name"))
    @app_commands.describe(game=_("Game number, as /history shows it", key="commands.opt_verify_game.description"),
                           table=_("Table number, as the lobby shows it (default: this channel's table)",
                                   key="commands.opt_table.description"))
    async def verify_command(self, interaction: discord.Interaction,
                             game: app_commands.Range[int, 1, 2**53] | None = None,
                             table: app_commands.Range[int, 1, 2**53] | None = None) -> None:
        if game is None and table is None:
            here = self.bot.tables.in_channel(interaction.channel_id) if interaction.channel_id else None
            if here is None:
                return await reply(interaction, t(user_lang(interaction), "after.verify_which"))
            table = here.id
        await self.show_verification(interaction, game_id=game, table_id=table)

    async def show_verification(self, interaction: discord.Interaction, *, game_id: int | None = None,
                                table_id: int | None = None) -> None:
        lang = user_lang(interaction)
        store = self.bot.store
        try:
            if game_id is None and table_id is not None:
                live = self.bot.tables.get(table_id)
                if live is not None and live.status in ("lobby", "playing"):
                    return await self.show_commitment(interaction, live.id, live.game, live.shuffle, lang)
                game_id = await store.game_of_table(table_id)
                if game_id is None:
                    record = await store.table(table_id)
                    if record is None:
                        return await reply(interaction, t(lang, "after.no_such_table"))
                    return await self.show_commitment(interaction, record.id, record.game,
                                                      record.meta.get("shuffle") or {}, lang)
            assert game_id is not None
            await interaction.response.defer(ephemeral=True, thinking=True)
            recorded = await self.load(game_id)
            if recorded is None:
                return await reply(interaction, await self.missing(game_id, lang))
            verdict = await asyncio.get_running_loop().run_in_executor(None, self.check, recorded)
        except Exception:
            log.exception("verification of game %s / table %s failed", game_id, table_id)
            return await reply(interaction, t(lang, "errors.unexpected"))
        await reply(interaction, embed=self.verdict_embed(recorded, verdict, lang))

    def check(self, recorded: Recorded) -> verify.Verdict:
        """Worker thread: the commitment and a full replay of the stored log."""
        record, detail = recorded.record, recorded.detail
        by_seat = {p["seat"]: p for p in detail["standings"]}
        seats = len(recorded.seats)
        shuffle = record.meta.get("shuffle") or {}
        seed = detail.get("seed")
        if shuffle.get("sha256") and record.meta.get("seed") != seed:  # table and record must agree
            return verify.Verdict(False, False, False, len(recorded.log), "seed_differs")
        return verify.check(
            self.engine(record.game), game=verify.committed(record.game, shuffle.get("variant")), table_id=record.id,
            seats=seats, seed=seed,
            nonce=shuffle.get("nonce"), published=shuffle.get("sha256"), options=recorded.options,
            log=recorded.log, scores=[by_seat[s]["score"] for s in range(seats) if s in by_seat],
            places=[by_seat[s]["place"] for s in range(seats) if s in by_seat])

    async def show_commitment(self, interaction: discord.Interaction, table_id: int, game: str,
                              shuffle: dict[str, Any], lang: str) -> None:
        if not shuffle.get("sha256"):
            return await reply(interaction, t(lang, "after.no_commitment_yet", table=table_id))
        embed = discord.Embed(title=t(lang, "after.commitment_title", table=table_id), colour=discord.Colour.blue())
        embed.description = "\n".join([
            t(lang, "after.commitment_full", sha=shuffle["sha256"]),
            t(lang, "after.commitment_pending"),
            t(lang, "after.how_to_check", preimage=verify.preimage(
                verify.committed(game, shuffle.get("variant")), table_id, 0, "N").replace(
                "|0|N", "|<seed>|<nonce>")),
        ])
        await reply(interaction, embed=embed)

    def verdict_embed(self, recorded: Recorded, verdict: verify.Verdict, lang: str) -> discord.Embed:
        record, detail = recorded.record, recorded.detail
        shuffle = record.meta.get("shuffle") or {}
        title = t(lang, f"{record.game}.title")
        ok = verdict.ok
        embed = discord.Embed(title=t(lang, "after.verify_title", game=title, id=recorded.game_id),
                              colour=discord.Colour.green() if ok else discord.Colour.red())
        lines = [t(lang, "after.verify_ok" if ok else "after.verify_failed")]
        variant = variant_line(record.game, {"variant": shuffle.get("variant")}, lang)
        if variant:  # (the commitment names it: the hash below covers it)
            lines.append(variant)
        if verdict.problem == "no_commitment":
            lines.append(t(lang, "after.problem_no_commitment"))
        else:
            seed = detail.get("seed")
            lines.append(t(lang, "after.commitment_full", sha=shuffle["sha256"]))
            lines.append(t(lang, "after.seed_nonce", seed=seed, nonce=shuffle["nonce"]))
            named = verify.committed(record.game, shuffle.get("variant"))
            recomputed = verify.commitment(named, record.id, seed, shuffle["nonce"]) if seed is not None else "-"
            lines.append(t(lang, "after.recomputed", sha=recomputed))
            lines.append(t(lang, "after.hash_ok" if verdict.hash_ok else "after.hash_bad"))
            if verdict.replay_ok and verdict.result_ok:
                lines.append(t(lang, "after.replay_ok", count=verdict.moves))
            elif verdict.problem in ("illegal_move", "extra_moves"):
                lines.append(t(lang, f"after.problem_{verdict.problem}", step=verdict.step, count=verdict.moves))
            elif verdict.problem == "seed_differs":
                lines.append(t(lang, "after.problem_seed_differs", table=record.meta.get("seed")))
            elif verdict.problem == "not_over":
                lines.append(t(lang, "after.problem_not_over", count=verdict.moves))
            elif verdict.replay_ok:
                lines.append(t(lang, "after.problem_result_differs", count=verdict.moves))
            lines.append(t(lang, "after.how_to_check", preimage=verify.preimage(
                named, record.id, seed if seed is not None else 0, shuffle["nonce"])))
        embed.description = "\n".join(lines)[:4000]
        return embed

    # -------------------------------------------------------------------------- Replay
    async def show_replay(self, interaction: discord.Interaction, game_id: int, step: int, *, edit: bool) -> None:
        lang = user_lang(interaction)
        try:
            recorded = await self.load(game_id)
            if recorded is None:
                return await reply(interaction, await self.missing(game_id, lang))
            loop = asyncio.get_running_loop()
            try:
                frame, starts = await loop.run_in_executor(None, self.frame, recorded, step)
            except GameError:  # the stored moves do not replay: /verify tells where
                return await reply(interaction, t(lang, "after.replay_broken", id=game_id))
            fake = self.table_like(recorded.record, recorded.seats, recorded.log[:frame.step], lang, frame.engine)
            ui = self.ui(recorded.record.game)
            drawn = await ui.table_message(fake, lang)
            embed = self.replay_embed(recorded, frame, fake, ui, drawn.summary, lang)
            view = self.replay_view(game_id, frame, starts, lang)
        except Exception:
            log.exception("replay of game %s failed", game_id)
            return await reply(interaction, t(lang, "errors.unexpected"))
        files = []
        if drawn.image is not None:
            embed.set_image(url="attachment://replay.png")
            files = [discord.File(io.BytesIO(drawn.image), filename="replay.png")]
        if edit and on_own_private_message(interaction):  # (never onto a public message: a forged click)
            await interaction.response.edit_message(embed=embed, attachments=files, view=view)
        else:
            await interaction.response.send_message(embed=embed, files=files, view=view, ephemeral=True,
                                                    allowed_mentions=NO_PINGS)

    def frame(self, recorded: Recorded, step: int) -> tuple[replay.Frame, list[int]]:
        """Worker thread: the game at *step* and the steps where rounds begin."""
        engine = self.engine(recorded.record.game)
        args = dict(seats=len(recorded.seats), seed=recorded.record.meta["seed"], options=recorded.options,
                    log=recorded.log)
        deal_event = registry.spec(recorded.record.game).deal_event
        return replay.build(engine, step=step, **args), replay.round_starts(engine, deal_event=deal_event, **args)

    def replay_embed(self, recorded: Recorded, frame: replay.Frame, fake: Table, ui: Any, summary: str,
                     lang: str) -> discord.Embed:
        title = t(lang, f"{recorded.record.game}.title")
        embed = discord.Embed(title=t(lang, "after.replay_title", game=title, id=recorded.game_id),
                              colour=discord.Colour.purple())
        variant = variant_line(recorded.record.game, recorded.record.meta.get("options", {}), lang)
        if frame.step == 0 or frame.seat is None:
            head = [t(lang, "after.replay_deal", count=frame.moves)]
        else:
            name = plain(recorded.seats[frame.seat].name)
            head = [t(lang, "after.replay_move", step=frame.step, count=frame.moves, name=name)]
            head += ui.narrate(fake, frame.events, lang)
        hands = []
        for seat, seen in enumerate(frame.hands):  # every hand, now that the game is over
            name = plain(recorded.seats[seat].name)
            hands += ui.replay_seat(seen, frame.table, frame.revealed, seat, name, lang)
        text = "\n".join(([variant] if variant else []) + head)
        heading = t(lang, "after.replay_hands_down" if frame.revealed else "after.replay_hands")
        rest = "\n".join([summary, "", heading, *hands])
        embed.description = (text[:1800] + "\n\n" + rest)[:4000]
        embed.set_footer(text=t(lang, "after.replay_footer", step=frame.step, count=frame.moves))
        return embed

    def replay_view(self, game_id: int, frame: replay.Frame, starts: list[int], lang: str) -> discord.ui.View:
        step, last = frame.step, frame.moves
        prev_round = max([s for s in starts if s < step], default=0)
        next_round = min([s for s in starts if s > step], default=last)
        B = ReplayButton
        view = discord.ui.View(timeout=None)
        for item in (
            B(game_id, 0, "f", t(lang, "after.first"), disabled=step == 0, row=0),
            B(game_id, max(0, step - JUMP), "b", t(lang, "after.back", count=JUMP), disabled=step == 0, row=0),
            B(game_id, max(0, step - 1), "p", t(lang, "after.previous"), disabled=step == 0, row=0,
              style=discord.ButtonStyle.primary),
            B(game_id, min(last, step + 1), "n", t(lang, "after.next"), disabled=step >= last, row=0,
              style=discord.ButtonStyle.primary),
            B(game_id, min(last, step + JUMP), "a", t(lang, "after.forward", count=JUMP), disabled=step >= last,
              row=0),
            B(game_id, prev_round, "r", t(lang, "after.round_back"), disabled=step == 0, row=1),
            B(game_id, next_round, "s", t(lang, "after.round_next"), disabled=step >= last, row=1),
            B(game_id, last, "l", t(lang, "after.last"), disabled=step >= last, row=1),
        ):
            view.add_item(item)
        return view

    # -------------------------------------------------------------------------- /versus
    @app_commands.command(name=_("versus", key="commands.versus.name"),
                          description=_("Your record against another player, across all servers",
                                        key="commands.versus.description"))
    @app_commands.rename(user=_("user", key="commands.opt_user.name"), game=_("game", key="commands.opt_game.name"))
    @app_commands.describe(user=_("Who you played against", key="commands.opt_versus_user.description"),
                           game=_("Which game", key="commands.opt_game.description"))
    @app_commands.choices(game=GAME_CHOICES)
    async def versus(self, interaction: discord.Interaction, user: discord.User,
                     game: app_commands.Choice[str] | None = None) -> None:
        lang = user_lang(interaction)
        me = interaction.user
        if user.id == me.id:
            return await reply(interaction, t(lang, "after.versus_self"))
        them = plain(user.display_name)
        try:
            figures = await self.bot.store.versus(me.id, user.id, game.value if game else None)
        except Exception:
            log.exception("versus %s / %s failed", me.id, user.id)
            return await reply(interaction, t(lang, "errors.unexpected"))
        embed = discord.Embed(title=t(lang, "after.versus_title", name=them), colour=discord.Colour.dark_gold())
        if not figures:
            embed.description = t(lang, "after.versus_none", name=them)
        for key, f in figures.items():
            lines = [t(lang, "after.versus_games", count=f["games"]),
                     t(lang, "after.versus_ahead", name=them, ahead=f["ahead"], behind=f["behind"], level=f["level"])]
            if has(f"after.versus_score_{key}"):  # what a score means, where the game's catalogue says it
                lines.append(t(lang, f"after.versus_score_{key}", name=them,
                               mine=decimal(f["score"] / f["games"], lang=lang),
                               theirs=decimal(f["other_score"] / f["games"], lang=lang)))
            embed.add_field(name=t(lang, f"{key}.title"), value="\n".join(lines)[:1024], inline=False)
        await reply(interaction, embed=embed, allowed_mentions=NO_PINGS)


async def setup(bot: Any) -> None:
    await bot.add_cog(AfterCog(bot))
