"""Many tables at once: the real bot under load, against the Discord stand-in.

    python bench/load.py                                   # N = 100 and 500 live tables, 60 s each; restart with 1,000
    python bench/load.py --tables 20 --seconds 20 --restart 100   # a quick check (about a minute)
    python bench/load.py --global-rate 0                   # lift Discord's global limit (50 requests/s)
    python bench/load.py --tables 500 --restart 0 --profile      # cProfile of the bot, top functions printed
    python bench/load.py --tables 500 --restart 0 --slow 15      # log what holds the bot's loop over 15 ms
    python bench/load.py --tables 500 --restart 0 --stalls 10    # where the bot's loop is while 10 ms late

Everything runs on loopback: the stand-in (``tests/fakediscord``) and the
simulated people live in this process; the bot is ``bot.py``'s ``main()`` in a
child process (``python bench/load.py --child bot``, the real ``CardBot`` with
``--sync-global``), and beside it a no-op discord.py bot (``--child noop``,
which only acknowledges) on a second stand-in in this same process.  Every
interaction sent to the bot is mirrored by one click at the no-op bot at the
same moment, so the no-op bot's acknowledgement times carry the same machine
and stand-in load: the ratio of the medians is the bot's own cost.

For each N of ``--tables``:

1. N tables are opened the way players do it (``/nimmt new`` or ``/garbage
   new``, Join, Add computer player, Start), in four steps; after each step the
   bot's resident memory is sampled: RSS per live table is the slope.
2. For ``--seconds`` the players play at human pace: the player pinged in a
   thread thinks (exponential, mean ``--think`` s), then clicks (0.3-1 s
   between the clicks of one turn); 11 nimmt! players open *My hand* or use
   their open panel (which the bot keeps current, and sends afresh below the
   ping of their turn); bystanders look up
   ``/leaderboard`` and ``/stats`` and open panels off turn.
3. Games take minutes to end, so for "does a closed table give its memory
   back" the hosts open N lobbies in spare channels and cancel them: tables
   held by the bot and RSS before, with the lobbies, and after.

Printed: acknowledgement latency (median, p99, max) of the bot and of the
no-op bot; click to updated table message and to updated panel (median, p99);
event-loop lag of the bot (a 5 ms sleeper in its loop: largest stall, p99,
stalls over 20 ms, and the loop thread's CPU during the worst one, which tells
work on the loop from the process being descheduled by a busy machine); CPU
per move (engine actions, computer moves included); the CPU of every process
of the run during play (the benchmark, the bot's loop thread and its other
threads, its two drawing processes, the no-op bot); RSS per table; REST calls
per second; and what went wrong: unanswered interactions, violations recorded
by the stand-in, 429s, and tables whose saved log replays to a different
state than the bot holds (checked in the bot process at the end).

``--restart R``: R live tables are written straight into a fresh database,
the bot starts and draws them all, is killed with SIGKILL and started again:
time to ready (gateway READY and commands synced), to every table playable
(a button on each table answered by the table, not by an error) and to every
table message redrawn, under the global limit.

Discord's per-channel edit bucket (5 per 5 s) is always on; ``--global-rate``
sets the global limit of the bot token (default 50 requests per second, as on
Discord; 0 = off).  Each run prints the machine's load average: this is a
shared 2-core machine; figures taken while it is busy are slower.  Logs of the
bot go to ``bench/out/load-*.log``.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "out"

PROBE_EVERY = 0.5  # s between the bot's probe lines
LAG_STEP = 0.005  # s: the loop-lag sleeper


# =========================================================================== child processes
#: how the bot and the no-op bot are started: this file imported as a module (its bytecode cached
#: like the bot's modules), not run as a script (a script is compiled again at every start)
_CHILD = [sys.executable, "-c", "import sys; from bench.load import main; sys.exit(main())"]


class _StallWatch:
    """A thread beside the bot's loop (``--stalls MS``): while the lag sleeper is
    more than ``late`` s overdue, it looks every millisecond at where the loop
    thread is, and counts the places.  One sample is about a millisecond of
    stall; a place is the two innermost frames and the three innermost of the
    bot's own code (``app/``, ``cogs/``, ``core/``, ``bot.py``).

    The thread needs the GIL to look, so it sees the loop thread more often
    where that thread lets the GIL go (a system call, zlib) than in Python
    code, which holds it for up to the switch interval (5 ms).  With the
    interval at 0.5 ms (one run at 500 tables) the same places came first, in
    nearly the same order, and the bot was slower: it stays at 5 ms."""

    OWN = tuple(str(ROOT / d) for d in ("app", "cogs", "core", "bot.py"))

    def __init__(self, late: float) -> None:
        import threading
        from collections import Counter

        self.late = late
        self.due = float("inf")  # when the sleeper should have woken
        self.samples: Counter[str] = Counter()
        self.current: list[str] = []  # the places of the stall under way
        self.worst: tuple[float, list[str]] = (0.0, [])  # the longest stall since the last take, its places
        self.loop_thread = threading.get_ident()
        threading.Thread(target=self._run, name="stall-watch", daemon=True).start()

    def _run(self) -> None:
        while True:
            time.sleep(0.001)
            if time.perf_counter() - self.due > self.late:
                frame = sys._current_frames().get(self.loop_thread)
                if frame is not None:
                    self.current.append(self.place(frame))

    def woke(self, lag: float) -> None:
        """The loop is back, ``lag`` s late: the stall's samples are counted."""
        self.due = float("inf")
        current, self.current = self.current, []
        self.samples.update(current)
        if current and lag > self.worst[0]:
            self.worst = (lag, current)

    @classmethod
    def place(cls, frame: Any) -> str:
        def name(f: Any) -> str:
            file = f.f_code.co_filename
            if file.startswith(str(ROOT)):
                short = file[len(str(ROOT)) + 1:]
            else:  # a library's path from its package, the standard library's from its folder
                short = file.rsplit("site-packages/", 1)[-1] if "site-packages/" in file else \
                    "/".join(Path(file).parts[-2:])
            return f"{short}:{f.f_lineno} {f.f_code.co_name}"

        inner, own = [], []  # the two innermost frames; the bot's own three innermost
        while frame is not None and len(own) < 3:
            if len(inner) < 2:
                inner.append(name(frame))
            if frame.f_code.co_filename.startswith(cls.OWN):
                own.append(name(frame))
            frame = frame.f_back
        return " < ".join([*inner, *[o for o in own if o not in inner]])

    def take(self) -> dict[str, Any]:
        taken, self.samples = self.samples, type(self.samples)()
        (lag, places), self.worst = self.worst, (0.0, [])
        return {"places": dict(taken), "worst": [lag, places]}


async def _probe(bot: Any, path: str) -> None:
    """In the bot's process: loop lag, CPU, memory and table counts, as JSON lines."""
    loop = asyncio.get_running_loop()
    stalls = float(os.environ.get("LOAD_STALLS") or 0)
    watch = _StallWatch(stalls / 1000) if stalls else None
    out = open(path, "a", buffering=1)
    loop.add_signal_handler(signal.SIGUSR1, lambda: loop.create_task(_replay_check(bot, out)))
    page = os.sysconf("SC_PAGE_SIZE")

    def memory() -> None:
        """Resident memory once malloc has handed freed pages back: what the live objects take."""
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * page
        out.write(json.dumps({"check": {"rss": rss, "blocks": sys.getallocatedblocks()}}) + "\n")

    loop.add_signal_handler(signal.SIGUSR2, memory)
    lags: list[float] = []
    worst = (0.0, 0.0)  # (lag, loop-thread CPU during it)
    import gc

    pauses: list[tuple[int, float, float]] = []  # (generation, seconds, thread CPU seconds) of the collector's passes
    started = [0.0, 0.0]

    def collector(phase: str, info: dict[str, Any]) -> None:
        # the young passes are thousands a second while tables are restored: no clocks for them
        # (the thread's CPU clock is a system call; read on each, it was a quarter of the bot's CPU
        # in py-spy's samples of a restart)
        if info.get("generation", 0) < 1:
            return
        if phase == "start":
            started[0], started[1] = time.perf_counter(), time.thread_time()
        else:
            pauses.append((info["generation"], time.perf_counter() - started[0], time.thread_time() - started[1]))

    gc.callbacks.append(collector)
    last = time.perf_counter()
    while True:
        t0, c0 = time.perf_counter(), time.thread_time()
        if watch is not None:
            watch.due = t0 + LAG_STEP
        await asyncio.sleep(LAG_STEP)
        t1 = time.perf_counter()
        if watch is not None:
            watch.woke(t1 - t0 - LAG_STEP)
        lag = t1 - t0 - LAG_STEP
        lags.append(lag)
        if lag > worst[0]:
            worst = (lag, time.thread_time() - c0)
        if t1 - last >= PROBE_EVERY:
            last = t1
            with open("/proc/self/statm") as f:
                rss = int(f.read().split()[1]) * page
            tables = bot.tables.tables if bot.is_ready() else {}
            values = list(tables.values())
            cog = bot.parts.loaded_tables
            line = {
                "t": time.time(), "rss": rss, "cpu": time.process_time(), "blocks": sys.getallocatedblocks(),
                "lags": [round(x, 5) for x in lags], "worst": worst,
                "held": len(values), "live": sum(1 for t in values if t.status in ("lobby", "playing")),
                "drawn": sum(1 for t in values if t.status == "playing" and t.messages.get("table")),
                "actions": sum(len(t.log) for t in values),
                "presenters": len(cog.presenter.shows) if cog is not None else 0,
                "ready": bot.is_ready(),
                "gc": [(g, round(x, 5), round(c, 5)) for g, x, c in pauses],
            }
            if watch is not None:
                line["stalls"] = watch.take()
            pauses.clear()
            out.write(json.dumps(line) + "\n")
            lags, worst = [], (0.0, 0.0)


async def _replay_check(bot: Any, out: Any) -> None:
    """Every table the bot holds: does its saved log replay to the state the bot has?"""
    differ: list[int] = []
    checked = 0
    for table in list(bot.tables.tables.values()):
        if table.engine is None:
            continue
        record = await bot.store.table(table.id)
        checked += 1
        if record is None:
            differ.append(table.id)
            continue
        cls = bot.tables.games[table.game]
        try:
            replay = cls.replay(len(table.seats), record.meta["seed"], bot.tables.engine_options(table),
                                [(int(s), str(a)) for s, a in record.actions])
        except Exception:
            differ.append(table.id)
            continue
        seats = [None, *range(len(table.seats))]
        if [replay.view(s) for s in seats] != [table.engine.view(s) for s in seats]:
            differ.append(table.id)
    out.write(json.dumps({"check": {"tables": checked, "differ": differ}}) + "\n")


def _spans(probe_path: str) -> Any:
    """In the bot's process: ``mark(name)`` writes when the start reached ``name``
    (seconds since the benchmark spawned the process) as a probe line."""
    t0 = float(os.environ.get("LOAD_T0") or time.time())
    seen: set[str] = set()

    def mark(name: str) -> None:
        if name not in seen:
            seen.add(name)
            with open(probe_path, "a") as out:
                out.write(json.dumps({"span": [name, round(time.time() - t0, 4)]}) + "\n")

    return mark


def _mark_start(botmod: Any, mark: Any) -> None:
    """Spans of a start: store open, extensions, tables restored, commands synced,
    connected, first interaction, ready."""
    import discord

    from app.tables.manager import TableManager

    def around(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            mark(label + " start")
            try:
                return await original(*args, **kwargs)
            finally:
                mark(label + " end")

        setattr(owner, name, timed)

    around(botmod, "open_database", "store open")
    around(TableManager, "restore", "tables restore")
    if hasattr(TableManager, "_restore_all"):  # restored while connecting
        around(TableManager, "_restore_all", "tables restore")
    around(discord.app_commands.CommandTree, "sync", "commands sync")
    around(botmod.CardBot, "load_extension", "extensions")
    state = discord.state.ConnectionState
    for parser, label in (("parse_ready", "gateway READY"), ("parse_interaction_create", "first interaction")):
        original = getattr(state, parser)

        def parse(self: Any, data: Any, _original: Any = original, _label: str = label) -> Any:
            mark(_label)
            return _original(self, data)

        setattr(state, parser, parse)
    ready = botmod.CardBot.on_ready

    async def on_ready(self: Any) -> None:
        mark("on_ready")
        await ready(self)

    setattr(botmod.CardBot, "on_ready", on_ready)  # the bench's own, patched in


def child_bot() -> int:
    """The real bot (bot.py's main) with the probe started in its loop."""
    probe_path = os.environ["LOAD_PROBE"]
    mark = _spans(probe_path)
    mark("python started")
    # the stand-in's launcher alone, by its path: importing it as tests.fakediscord.launch would
    # import the whole stand-in (its server) into the bot's process, which a deployed bot never has
    import importlib.util

    spec = importlib.util.spec_from_file_location("_fakediscord_launch", ROOT / "tests" / "fakediscord" / "launch.py")
    assert spec is not None and spec.loader is not None
    launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch)
    launch.patch_discord_from_env()
    import bot as botmod

    mark("bot imported")
    _mark_start(botmod, mark)
    original = botmod.CardBot.setup_hook

    slow = float(os.environ.get("LOAD_SLOW") or 0)

    async def setup_hook(self: Any) -> None:
        if slow:
            # asyncio's debug mode names every callback that held the loop longer (in the bot's log)
            loop = asyncio.get_running_loop()
            loop.set_debug(True)
            loop.slow_callback_duration = slow / 1000
            import logging

            logging.getLogger("asyncio").setLevel(logging.WARNING)
        mark("setup_hook start")
        await original(self)
        mark("setup_hook end")
        asyncio.get_running_loop().create_task(_probe(self, probe_path))

    setattr(botmod.CardBot, "setup_hook", setup_hook)  # the bench's own, patched in
    profile = os.environ.get("LOAD_PROFILE")
    if not profile:
        return botmod.main(["--sync-global"])
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    try:
        return botmod.main(["--sync-global"])
    finally:
        profiler.disable()
        profiler.dump_stats(profile)


def child_noop() -> int:
    """A discord.py bot that only acknowledges: the floor of what any bot costs."""
    import discord

    from tests.fakediscord.launch import patch_discord_from_env

    patch_discord_from_env()
    channel_id = int(os.environ["NOOP_CHANNEL"])

    class Noop(discord.Client):
        async def on_ready(self) -> None:
            view = discord.ui.View(timeout=None)
            view.add_item(discord.ui.Button(label="Ack", custom_id="noop:ack"))
            await self.get_partial_messageable(channel_id).send("no-op", view=view)

        async def on_interaction(self, interaction: discord.Interaction) -> None:
            await interaction.response.defer()

    Noop(intents=discord.Intents.none()).run(os.environ["FAKEDISCORD_TOKEN"], log_handler=None)
    return 0


# =========================================================================== the driver
def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(values: list[float]) -> str:
    if not values:
        return "      -        -        -  (n=0)"
    return (f"{1000 * statistics.median(values):7.1f} {1000 * pct(values, 0.99):8.1f} "
            f"{1000 * max(values):8.1f}  (n={len(values)})")


def _die_with_parent() -> None:
    """In a child: SIGTERM when the benchmark itself goes away (Linux prctl PR_SET_PDEATHSIG)."""
    import ctypes

    ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def _kind(rec: Any) -> str:
    """What an interaction was, for the breakdown: '/leaderboard', 'nimmt.hand', 'noop:ack'..."""
    if rec.type == 2:
        return "/" + rec.name
    custom_id = str(rec.data.get("custom_id", ""))
    return custom_id if custom_id.startswith("noop:") else custom_id.split(":")[0]


def make_fd(**options: Any) -> Any:
    from tests.fakediscord import FakeDiscord, NoAcknowledgement

    class BenchDiscord(FakeDiscord):
        """The stand-in, counting acknowledgement times and unanswered interactions."""

        def __init__(self, **kw: Any) -> None:
            super().__init__(**kw)
            self.acks: list[float] = []
            self.by_kind: dict[str, list[float]] = defaultdict(list)
            self.unanswered = 0
            self.mirror: Any = None
            self.recording = True

        async def _run_interaction(self, rec: Any, *, timeout: float | None = None) -> Any:
            if self.mirror is not None:
                self.mirror()
            try:
                result = await super()._run_interaction(rec, timeout=timeout)
            except NoAcknowledgement:
                self.unanswered += 1
                raise
            if self.recording and result.latency is not None:
                self.acks.append(result.latency)
                self.by_kind[_kind(rec)].append(result.latency)
            return result

    return BenchDiscord(**options)


class Probe:
    """Reads the bot's probe lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.lines: list[dict[str, Any]] = []
        self.checks: list[dict[str, Any]] = []
        self.spans: list[tuple[str, float]] = []  # (what, seconds since the process was spawned)

    def poll(self) -> dict[str, Any] | None:
        if self.path.exists():
            with open(self.path) as f:
                f.seek(self.offset)
                data = f.read()
            complete = data[: data.rfind("\n") + 1]
            self.offset += len(complete)
            for raw in complete.splitlines():
                item = json.loads(raw)
                if "check" in item:
                    self.checks.append(item["check"])
                elif "span" in item:
                    self.spans.append(tuple(item["span"]))
                else:
                    self.lines.append(item)
        return self.lines[-1] if self.lines else None

    async def next(self, timeout: float = 60) -> dict[str, Any]:
        """The first line written after now."""
        self.poll()
        seen = len(self.lines)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            self.poll()
            if len(self.lines) > seen:
                return self.lines[-1]
        raise TimeoutError("the bot's probe is silent")


@dataclass
class Spec:
    """One table as the players see it."""

    game: str
    channel: Any
    host: Any
    humans: list[Any]
    computers: int
    table_id: int = 0
    thread_id: int = 0
    table_msg: Any = None
    table_changed: asyncio.Event = field(default_factory=asyncio.Event)
    pings: asyncio.Queue = field(default_factory=asyncio.Queue)
    panels: dict[int, Any] = field(default_factory=dict)  # user id -> their open panel message
    waiting_table: list[float] = field(default_factory=list)  # times of moves not yet shown on the table
    waiting_panels: dict[int, float] = field(default_factory=dict)  # user id -> time of a move to show

    @property
    def seats(self) -> int:
        return len(self.humans) + self.computers


class Bench:
    def __init__(self, args: argparse.Namespace, label: str) -> None:
        self.args = args
        self.label = label
        self.rng = random.Random(f"load:{label}")
        rate = (args.global_rate, 1.0) if args.global_rate else None
        self.fd = make_fd(global_rate=rate, keep_history=False)
        self.noop = make_fd(keep_history=False, token="noop-token")
        self.specs: list[Spec] = []
        self.by_channel: dict[int, Spec] = {}
        self.guilds: list[Any] = []
        self.bystanders: dict[int, list[Any]] = {}
        self.table_times: list[float] = []
        self.table_by_how: dict[str, list[float]] = {}  # the same, by how the table message came
        self.panel_times: list[float] = []  # the mover's own panel: its click's answer, image included
        self.other_panel_times: list[float] = []  # other players' open panels, redrawn by the bot
        self.moves = 0
        self.redrawn: dict[int, float] = {}
        self.redraw_since: float | None = None
        self.stop = False
        self.fast = False
        self.undrawn = 0
        self.procs: list[subprocess.Popen] = []
        self.tmp = Path(tempfile.mkdtemp(prefix="cardnight-load-"))
        self.db = self.tmp / "bot.db"
        self.probe = Probe(self.tmp / "probe.jsonl")
        self.bot: subprocess.Popen | None = None
        self.noop_pid: int | None = None
        self.spawned_at = 0.0
        self.fd.message_listeners.append(self.on_message)

    # -------------------------------------------------------------- world
    def build(self, count: int, per_guild: int = 50) -> None:
        fd, rng = self.fd, self.rng
        for index in range(count):
            if index % per_guild == 0:
                guild = fd.add_guild(f"Night {len(self.guilds) + 1}", locale="en-US")
                self.guilds.append(guild)
                watchers = []
                for b in range(3):
                    user = fd.add_user(f"watcher{len(self.guilds)}-{b}")
                    fd.add_member(guild, user)
                    watchers.append(user)
                self.bystanders[guild.id] = watchers
            guild = self.guilds[-1]
            channel = fd.add_channel(guild, f"table-{index}")
            game = "nimmt" if index % 2 == 0 else "garbage"
            seats = rng.choice((4, 5))
            computers = rng.choice((0, 1, 1, 2))
            humans = []
            for h in range(seats - computers):
                user = fd.add_user(f"p{index}-{h}")
                fd.add_member(guild, user)
                humans.append(user)
            spec = Spec(game, channel, humans[0], humans, computers)
            self.specs.append(spec)
            self.by_channel[channel.id] = spec

    def on_message(self, m: Any, kind: str) -> None:
        channel = self.fd.channels.get(m.channel_id)
        if channel is None:
            return
        # A table plays in its thread, or in its channel when no thread could be opened.
        spec = self.by_channel.get(channel.parent_id if channel.is_thread else channel.id)
        if spec is None:
            return
        now = time.perf_counter()
        if m.ephemeral_to is not None:
            # (an open panel is redrawn where it is, or comes afresh below the ping of its player's turn)
            if kind != "delete" and m.ephemeral_to in spec.waiting_panels:
                self.other_panel_times.append(now - spec.waiting_panels.pop(m.ephemeral_to))
            if kind == "create" and any((b.get("custom_id") or "").startswith("nimmt.refresh:") for b in m.buttons()):
                spec.panels[m.ephemeral_to] = m  # the player's newest panel (it follows them below each ping)
            return
        if channel.is_thread:
            spec.thread_id = channel.id
        if kind != "delete" and any(a.get("filename") == "table.png" for a in m.attachments):
            spec.table_msg = m
            spec.table_changed.set()
            # how the table message came: a new message, or an edit through a token or the channel
            how = "new message" if kind == "create" else f"edit via {m.edited_by[-1] if m.edited_by else '?'}"
            for t0 in spec.waiting_table:
                self.table_times.append(now - t0)
                self.table_by_how.setdefault(how, []).append(now - t0)
            spec.waiting_table.clear()
            if self.redraw_since is not None and spec.table_id not in self.redrawn:
                self.redrawn[spec.table_id] = now - self.redraw_since
        if kind == "create":
            humans = {u.id: u for u in spec.humans}
            for uid in m.mentions:
                if uid in humans:
                    spec.pings.put_nowait(uid)

    # -------------------------------------------------------------- processes
    def spawn_bot(self, name: str) -> None:
        OUT.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.fd.env(), "DISCORD_TOKEN": self.fd.token, "DATABASE_PATH": str(self.db),
               "LOG_LEVEL": "WARNING", "LOAD_PROBE": str(self.probe.path), "PYTHONPATH": str(ROOT)}
        env.pop("DEV_GUILD", None)
        # A deployed bot keeps its modules' bytecode (__pycache__, written at its first start; pip
        # compiles its libraries): without this a machine that sets PYTHONDONTWRITEBYTECODE (this
        # one does) compiles every module of the bot again at each start, the restart included.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if self.args.slow:
            env["LOAD_SLOW"] = str(self.args.slow)
        if self.args.stalls:
            env["LOAD_STALLS"] = str(self.args.stalls)
        if self.args.profile:
            env["LOAD_PROFILE"] = str(OUT / f"load-{self.label}.prof")
        log = open(OUT / f"load-{self.label}-{name}.log", "w")
        self.spawned_at = time.perf_counter()
        env["LOAD_T0"] = repr(time.time())
        self.bot = subprocess.Popen([*_CHILD, "--child", "bot"],
                                    cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    preexec_fn=_die_with_parent)
        self.procs.append(self.bot)
        if name == "again" and self.args.spy:
            # py-spy samples the start from outside (collapsed stacks, one line per stack and count)
            spy = Path(sys.executable).with_name("py-spy")
            if not spy.exists():
                raise SystemExit("--spy needs py-spy beside this Python (pip install py-spy==0.4.3)")
            self.procs.append(subprocess.Popen(
                [str(spy), "record", "--pid", str(self.bot.pid), "-d", str(self.args.spy), "-r", "250", "-f", "raw",
                 "--nonblocking", "-o", str(OUT / f"load-{self.label}-start.spy")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    async def start_noop(self) -> None:
        await self.noop.start()
        guild = self.noop.add_guild("No-op")
        channel = self.noop.add_channel(guild, "noop")
        user = self.noop.add_user("clicker")
        self.noop.add_member(guild, user)
        env = {**os.environ, **self.noop.env(), "NOOP_CHANNEL": str(channel.id), "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen([*_CHILD, "--child", "noop"], cwd=ROOT,
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=_die_with_parent)
        self.procs.append(proc)
        self.noop_pid = proc.pid
        message = await self.noop.wait_for(lambda: next(iter(self.noop.messages(channel)), None), timeout=30)
        tasks: set[asyncio.Task] = set()

        def mirror() -> None:
            task = asyncio.get_running_loop().create_task(self.noop.click(user, message, "noop:ack"))
            tasks.add(task)
            task.add_done_callback(lambda t: (tasks.discard(t), t.cancelled() or t.exception()))

        self.fd.mirror = mirror

    async def wait_bot_ready(self, timeout: float = 120) -> None:
        await self.fd.wait_for(lambda: self.fd.connected, timeout=timeout, interval=0.01)

    async def stop_bot(self, sig: int = signal.SIGTERM) -> None:
        if self.bot is None:
            return
        self.bot.send_signal(sig)
        for _ in range(300):
            if self.bot.poll() is not None:
                break
            await asyncio.sleep(0.1)
        else:
            self.bot.kill()
        self.bot = None

    async def close(self) -> None:
        self.stop = True
        await self.stop_bot()
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        await self.fd.stop()
        await self.noop.stop()

    async def memory(self) -> int:
        """The bot's RSS after malloc_trim (freed memory handed back)."""
        return (await self.replay_check(signal.SIGUSR2))["rss"]

    async def replay_check(self, sig: int = signal.SIGUSR1) -> dict[str, Any]:
        assert self.bot is not None
        before = len(self.probe.checks)
        self.bot.send_signal(sig)
        for _ in range(600):
            await asyncio.sleep(0.1)
            self.probe.poll()
            if len(self.probe.checks) > before:
                return self.probe.checks[-1]
        return {"tables": 0, "differ": ["no answer"]}

    # -------------------------------------------------------------- people
    async def open_table(self, spec: Spec) -> None:
        fd = self.fd
        options = {"seats": spec.seats}
        if spec.game == "nimmt":
            options["rounds"] = 1
        r = await fd.slash(spec.host, spec.channel, f"{spec.game} new", **options)
        lobby = r.message
        # (a save slower than 1.2 s on a busy machine answers "thinking..." first, then the lobby)
        await fd.wait_for(lambda: lobby.buttons(), timeout=60)
        spec.table_id = int(lobby.buttons()[0]["custom_id"].split(":")[1])  # table.join:<id>
        for user in spec.humans[1:]:
            r = await fd.click(user, lobby, f"table.join:{spec.table_id}")
        for _ in range(spec.computers):
            r = await fd.click(spec.host, lobby, f"table.cpu:{spec.table_id}")
        await fd.click(spec.host, lobby, f"table.start:{spec.table_id}")

    async def open_lobbies(self) -> list[tuple[Spec, Any]]:
        """A lobby per table in a spare channel of its server, opened by the table's host."""
        spares = [(spec, self.fd.add_channel(self.fd.guild_of(spec.channel), f"spare-{i}"))
                  for i, spec in enumerate(self.specs)]
        sem = asyncio.Semaphore(16)

        async def one(spec: Spec, channel: Any) -> tuple[Spec, Any]:
            async with sem:
                return spec, (await self.fd.slash(spec.host, channel, "garbage new", seats=4)).message

        return await asyncio.gather(*(one(spec, channel) for spec, channel in spares))

    async def cancel_lobbies(self, lobbies: list[tuple[Spec, Any]]) -> None:
        sem = asyncio.Semaphore(16)

        async def one(spec: Spec, lobby: Any) -> None:
            async with sem:
                table_id = lobby.buttons()[0]["custom_id"].split(":")[1]
                await self.fd.click(spec.host, lobby, f"table.cancel:{table_id}")

        await asyncio.gather(*(one(spec, lobby) for spec, lobby in lobbies))

    async def pause(self, low: float, high: float) -> None:
        await asyncio.sleep(0.01 if self.fast else self.rng.uniform(low, high))

    async def think(self) -> None:
        await asyncio.sleep(0.02 if self.fast else min(30.0, self.rng.expovariate(1 / self.args.think)))

    def moved(self, spec: Spec, user: Any) -> float:
        t0 = time.perf_counter()
        self.moves += 1
        spec.waiting_table.append(t0)
        for other in spec.humans:
            if other.id != user.id and other.id in spec.panels:
                spec.waiting_panels.setdefault(other.id, t0)
        return t0

    def unmoved(self, spec: Spec, t0: float) -> None:
        self.moves -= 1
        if t0 in spec.waiting_table:
            spec.waiting_table.remove(t0)
        for uid, t in list(spec.waiting_panels.items()):
            if t == t0:
                del spec.waiting_panels[uid]

    async def player(self, spec: Spec) -> None:
        users = {u.id: u for u in spec.humans}
        while not self.stop:
            try:
                uid = await asyncio.wait_for(spec.pings.get(), 1.0)
            except asyncio.TimeoutError:
                continue
            await self.think()
            if self.stop:
                return
            try:
                if spec.game == "nimmt":
                    await self.nimmt_turn(spec, users[uid])
                else:
                    await self.garbage_turn(spec, users[uid])
            except (LookupError, PermissionError, ValueError, TimeoutError):
                pass  # the message moved on under the player (a stale panel): they wait for the next ping
            except AssertionError:
                pass  # unanswered: counted by the stand-in

    async def nimmt_turn(self, spec: Spec, user: Any) -> None:
        from app.i18n.catalogue import t as translate
        from tests.e2e import button, private_answer, select

        fd = self.fd
        panel = spec.panels.get(user.id)
        if panel is None or panel.deleted or self.rng.random() < 0.3:
            while spec.table_msg is None:
                await asyncio.sleep(0.1)
            r = await fd.click(user, spec.table_msg, f"nimmt.hand:{spec.table_id}")
            panel = await private_answer(r)  # (a followup after an update of the table message)
            spec.panels[user.id] = panel
            await self.pause(0.3, 1.0)
        no_fit = translate("en", "nimmt.stack_no_fit")
        for _ in range(30):
            steal = select(panel, r"nimmt.steal:\d+:.*")
            opener = select(panel, r"nimmt.open:\d+:.*")
            cards = select(panel, r"nimmt.cards:\d+:.*")
            stacks = select(panel, r"nimmt.stack:\d+:.*")
            end = button(panel, r"nimmt.pass:\d+:.*")
            take = button(panel, r"nimmt.take:\d+:.*")
            fitting = [o for o in (stacks or {}).get("options", []) if o.get("description") != no_fit]
            move = True
            if steal:
                self.moved(spec, user)
                r = await fd.select(user, panel, steal["custom_id"], [steal["options"][0]["value"]])
            elif opener:
                self.moved(spec, user)
                r = await fd.select(user, panel, opener["custom_id"], [opener["options"][0]["value"]])
            elif cards:
                values = [o["value"] for o in cards["options"]][: cards["max_values"]]
                self.moved(spec, user)
                r = await fd.select(user, panel, cards["custom_id"], values)
            elif fitting and not take:
                move = False
                r = await fd.select(user, panel, stacks["custom_id"], [self.rng.choice(fitting)["value"]])
            elif end:
                self.moved(spec, user)
                r = await fd.click(user, panel, end["custom_id"])
            elif take:
                self.moved(spec, user)
                r = await fd.click(user, panel, take["custom_id"])
            elif stacks:
                move = False
                r = await fd.select(user, panel, stacks["custom_id"], [stacks["options"][0]["value"]])
            else:
                return  # no controls: not (or no longer) this player's turn
            if move and r.ack_type == 6:  # acknowledged at once: the panel follows as an edit
                await r.settled(10)
                rec = r.interaction
                if rec.first_edit_at is not None:
                    self.panel_times.append(rec.first_edit_at - rec.dispatched_at)
            elif move and r.latency is not None:
                self.panel_times.append(r.latency)
            panel = r.message
            spec.panels[user.id] = panel
            await self.pause(0.3, 1.0)

    async def garbage_turn(self, spec: Spec, user: Any) -> None:
        fd = self.fd
        for _ in range(12):
            message = spec.table_msg
            ops = [b for b in (message.buttons() if message is not None else [])
                   if not b["disabled"] and b["custom_id"].split(":")[0] in ("garbage.draw", "garbage.discard", "garbage.jack")]
            if not ops:
                if not await self.table_change(spec, 5):
                    return
                continue
            choice = self.rng.choice(ops)
            spec.table_changed.clear()
            t0 = self.moved(spec, user)
            r = await fd.click(user, message, choice["custom_id"])
            if r.ack_type != 6:  # refused (an old button, not this player's turn): look again
                self.unmoved(spec, t0)
                if not await self.table_change(spec, 5):
                    return
                continue
            # A drawn Jack asks for a slot: the table message shows it; otherwise the turn is over.
            if not await self.table_change(spec, 10, cleared=True):
                return
            after = spec.table_msg
            if not any(b["custom_id"].split(":")[0] == "garbage.jack" and not b["disabled"] for b in after.buttons()):
                return
            await self.pause(0.3, 1.0)

    async def table_change(self, spec: Spec, timeout: float, cleared: bool = False) -> bool:
        if not cleared:
            spec.table_changed.clear()
        try:
            await asyncio.wait_for(spec.table_changed.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def bystander(self, guild: Any) -> None:
        fd = self.fd
        watchers = self.bystanders[guild.id]
        specs = [s for s in self.specs if s.channel.guild_id == guild.id]
        while not self.stop:
            await asyncio.sleep(self.rng.expovariate(1 / self.args.bystander))
            if self.stop or self.fast:
                return
            kind = self.rng.random()
            try:
                if kind < 0.4:
                    await fd.slash(self.rng.choice(watchers), self.rng.choice(specs).channel, "leaderboard")
                elif kind < 0.7:
                    await fd.slash(self.rng.choice(watchers), self.rng.choice(specs).channel, "stats")
                else:  # a seated player opens their hand off turn
                    spec = self.rng.choice([s for s in specs if s.game == "nimmt"] or specs)
                    if spec.game == "nimmt" and spec.table_msg is not None and not spec.table_msg.deleted:
                        user = self.rng.choice(spec.humans)
                        r = await fd.click(user, spec.table_msg, f"nimmt.hand:{spec.table_id}")
                        from tests.e2e import private_answer

                        spec.panels[user.id] = await private_answer(r)
            except (LookupError, PermissionError, ValueError, AssertionError, TimeoutError):
                pass

    # -------------------------------------------------------------- phases
    async def open_tables(self, specs: list[Spec], concurrency: int = 16) -> None:
        queue: asyncio.Queue = asyncio.Queue()
        for spec in specs:
            queue.put_nowait(spec)

        async def worker() -> None:
            while not queue.empty():
                await self.open_table(queue.get_nowait())

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        try:
            await self.fd.wait_for(lambda: all(s.table_msg is not None for s in specs), timeout=120, interval=0.2)
        except TimeoutError:
            self.undrawn = sum(1 for s in specs if s.table_msg is None)  # reported; the rest is measured anyway


async def run_load(args: argparse.Namespace, n: int) -> dict[str, Any]:
    bench = Bench(args, f"n{n}")
    fd = bench.fd
    await fd.start()
    report: dict[str, Any] = {"n": n, "stalls_ms": args.stalls}
    try:
        bench.build(n)
        await bench.start_noop()
        bench.spawn_bot("run")
        await bench.wait_bot_ready()
        await fd.wait_commands(timeout=60)
        await asyncio.sleep(2)  # discord.py's on_ready and the GC freeze
        rss = [(0, await bench.memory())]
        steps = sorted({max(1, n * k // 4) for k in (1, 2, 3, 4)})
        opened = 0
        t_open = time.perf_counter()
        for step in steps:
            await bench.open_tables(bench.specs[opened:step])
            opened = step
            await asyncio.sleep(1.5)
            rss.append((opened, await bench.memory()))
        report["open_s"] = time.perf_counter() - t_open
        # ---- play
        fd.acks.clear()
        fd.by_kind.clear()
        bench.noop.acks.clear()
        bench.table_times.clear()
        bench.table_by_how.clear()
        bench.panel_times.clear()
        bench.other_panel_times.clear()
        requests_before = len(fd.requests)
        first = await bench.probe.next()
        cpu_before = _cpu_split(bench)
        players = [asyncio.create_task(bench.player(s)) for s in bench.specs]
        watchers = [asyncio.create_task(bench.bystander(g)) for g in bench.guilds]
        load_start = os.getloadavg()
        t0 = time.perf_counter()
        await asyncio.sleep(args.seconds)
        elapsed = time.perf_counter() - t0
        cpu_after = _cpu_split(bench)
        report["cpu_split"] = {k: v - cpu_before.get(k, 0.0) for k, v in cpu_after.items()}
        last = await bench.probe.next()
        lines = [x for x in bench.probe.lines if first["t"] < x["t"] <= last["t"]]
        lags = [lag for x in lines for lag in x["lags"]]
        worst = max((tuple(x["worst"]) for x in lines), default=(0.0, 0.0))
        report["gc"] = [tuple(p) for x in lines for p in x.get("gc", [])]
        stall_places: dict[str, int] = defaultdict(int)
        worst_stall: list[Any] = [0.0, []]
        for x in lines:
            stalls = x.get("stalls", {})
            for where, count in stalls.get("places", {}).items():
                stall_places[where] += count
            if stalls.get("worst", [0.0])[0] > worst_stall[0]:
                worst_stall = stalls["worst"]
        report["stall_places"] = dict(stall_places)
        report["worst_stall"] = worst_stall
        rest = fd.requests[requests_before:]
        bot_rest = [r for r in rest if not r.path.startswith(("/interactions/", "/webhooks/"))]
        report.update(
            load_start=load_start, load_end=os.getloadavg(), seconds=elapsed,
            acks=list(fd.acks), by_kind={k: list(v) for k, v in fd.by_kind.items()}, noop=list(bench.noop.acks), table=list(bench.table_times),
            table_by_how={k: list(v) for k, v in bench.table_by_how.items()},
            panel=list(bench.panel_times), other_panels=list(bench.other_panel_times),
            lags=lags, worst=worst, moves=last["actions"] - first["actions"], cpu=last["cpu"] - first["cpu"],
            player_moves=bench.moves, rss=rss, rest_per_s=len(bot_rest) / elapsed, routes=_routes(rest, elapsed),
            all_rest_per_s=len(rest) / elapsed, live=last["live"], undrawn=bench.undrawn,
            no_thread=sum(1 for spec in bench.specs if spec.table_msg is not None and not spec.thread_id),
        )
        # ---- close: do closed tables give their memory back?  Games take minutes to end, so N lobbies
        # are opened in spare channels and cancelled by their hosts.
        bench.stop = True
        for task in players + watchers:
            task.cancel()
        await asyncio.gather(*players, *watchers, return_exceptions=True)
        fd.global_rate = None  # not measured
        await asyncio.sleep(2)
        before = await bench.probe.next()
        before["rss"] = await bench.memory()
        lobbies = await bench.open_lobbies()
        await asyncio.sleep(1)
        opened_line = await bench.probe.next()
        opened_line["rss"] = await bench.memory()
        await bench.cancel_lobbies(lobbies)
        await asyncio.sleep(2)
        after = await bench.probe.next()
        after["rss"] = await bench.memory()
        report["close"] = {"lobbies": len(lobbies), "held": [before["held"], opened_line["held"], after["held"]],
                           "live": [before["live"], opened_line["live"], after["live"]],
                           "rss": [before["rss"], opened_line["rss"], after["rss"]]}
        report["check"] = await bench.replay_check()
        report["unanswered"] = fd.unanswered + bench.noop.unanswered
        report["violations"] = list(fd.violations) + list(bench.noop.violations)
        report["429"] = sum(1 for r in fd.requests if r.status == 429)
    finally:
        await bench.close()
    if args.profile:
        import pstats

        path = OUT / f"load-{bench.label}.prof"
        if path.exists():
            print(f"\nprofile of the bot at N={n} ({path.relative_to(ROOT)}), top functions by own time:")
            pstats.Stats(str(path)).sort_stats("tottime").print_stats(18)
    return report


def _routes_429(fd: Any) -> str:
    """The routes that drew a 429, with their counts (a path's ids as ``{id}``)."""
    seen = collections.Counter(f"{r.method} {re.sub(r'/[0-9]+', '/{id}', r.path.split('?')[0])}"
                               for r in fd.requests if r.status == 429)
    return ", ".join(f"{route} {n}" for route, n in seen.most_common())


def _routes(requests: list[Any], seconds: float) -> list[tuple[str, float]]:
    """REST calls per second by route ('PATCH /channels/{id}/messages/{id}': 12.5), most first."""
    import re

    counts: dict[str, int] = defaultdict(int)
    for r in requests:
        path = re.sub(r"/\d+", "/{id}", r.path)
        path = re.sub(r"(/webhooks/\{id\}/)[^/]+", r"\1{token}", path)
        path = re.sub(r"(/interactions/\{id\}/)[^/]+", r"\1{token}", path)
        counts[f"{r.method} {path}"] += 1
    return sorted(((k, v / seconds) for k, v in counts.items()), key=lambda kv: -kv[1])


def _message_calls(routes: list[tuple[str, float]]) -> dict[str, float]:
    """Messages created, edited and deleted per second, from :func:`_routes`: in channels
    (counted against the global limit) plus through interaction tokens (``token ...``,
    not counted: followups, edits and deletions of ``@original``)."""
    out = dict.fromkeys(("created", "edited", "deleted", "token created", "token edited", "token deleted"), 0.0)
    for route, rate in routes:
        method, path = route.split(" ", 1)
        token = path.startswith(("/webhooks/", "/interactions/"))
        if path.endswith("/messages") and method == "POST" or token and method == "POST" and path.endswith("{token}"):
            kind = "created"
        elif "/messages/" in path and method == "PATCH":
            kind = "edited"
        elif "/messages/" in path and method == "DELETE":
            kind = "deleted"
        else:
            continue
        out[kind] += rate
        if token:
            out["token " + kind] += rate
    return out


def print_load(args: argparse.Namespace, r: dict[str, Any]) -> None:
    n = r["n"]
    print(f"\n== {n} live tables ({n - n // 2} 11 nimmt!, {n // 2} Garbage; 4-5 seats, 0-2 computers), "
          f"{r['seconds']:.0f} s of play, think {args.think:g} s; "
          f"load average at start {r['load_start'][0]:.2f}, at end {r['load_end'][0]:.2f}")
    print(f"   opened in {r['open_s']:.0f} s; live at the end of play: {r['live']}; table message never shown: "
          f"{r['undrawn']}; playing in the channel (no thread): {r['no_thread']}")
    print(f"{'':38} {'median':>7} {'p99':>8} {'max':>8}  (ms)")
    print(f"{'ack, bot':38} {ms(r['acks'])}")
    print(f"{'ack, no-op bot (same moment)':38} {ms(r['noop'])}")
    if r["acks"] and r["noop"]:
        print(f"{'   ratio of medians':38} {statistics.median(r['acks']) / statistics.median(r['noop']):7.2f}")
    for kind, values in sorted(r["by_kind"].items(), key=lambda kv: -len(kv[1])):
        print(f"{'   ' + kind:38} {ms(values)}")
    print(f"{'click -> table message updated':38} {ms(r['table'])}")
    for how, values in sorted(r.get("table_by_how", {}).items(), key=lambda kv: -len(kv[1])):
        print(f"{'   ' + how:38} {ms(values)}")
    print(f"{'click -> own panel updated (image)':38} {ms(r['panel'])}")
    print(f"{'click -> others panels updated':38} {ms(r['other_panels'])}")
    lags = r["lags"]
    worst, worst_cpu = r["worst"]
    over = sum(1 for x in lags if x > 0.020)
    print(f"event loop lag: largest {1000 * worst:.1f} ms (loop thread on CPU {1000 * worst_cpu:.1f} ms of it), "
          f"p99 {1000 * pct(lags, 0.99):.1f} ms, {over} of {len(lags)} samples over 20 ms")
    full = [(x, c) for g, x, *c in r["gc"] if g == 2]
    longest = max(full, default=(0.0, [0.0]))
    cpu = f", on CPU {1000 * longest[1][0]:.1f} ms of it" if longest[1] else ""
    median = f"median {1000 * statistics.median(x for x, _ in full):.1f} ms, " if full else ""
    print(f"cyclic collector: {len(full)} full passes ({median}longest {1000 * longest[0]:.1f} ms{cpu}), "
          f"{sum(1 for g, *_ in r['gc'] if g == 1)} of generation 1")
    places = r.get("stall_places")
    if places:
        print(f"where the loop was while over {r['stalls_ms']:g} ms late ({sum(places.values())} samples, "
              "about 1 ms each; two innermost frames < the bot's own):")
        for where, count in sorted(places.items(), key=lambda kv: -kv[1])[:12]:
            print(f"   {count:5}  {where}")
        lag, seen = r["worst_stall"]
        print(f"   the longest sampled stall ({1000 * lag:.1f} ms), its samples in order:")
        for where in seen:
            print(f"          {where}")
    moves = r["moves"]
    print(f"moves: {moves} engine actions ({moves / r['seconds']:.1f}/s; {r['player_moves']} by the simulated "
          f"players), bot CPU {r['cpu']:.1f} s = {1000 * r['cpu'] / max(1, moves):.2f} ms per move")
    split = r.get("cpu_split") or {}
    if split:
        total = sum(split.values())
        print(f"CPU during play ({r['seconds']:.0f} s on {os.cpu_count()} cores): "
              + ", ".join(f"{k} {v:.1f} s" for k, v in split.items())
              + f"; {total:.1f} s in all = {100 * total / (r['seconds'] * (os.cpu_count() or 1)):.0f}% of the cores")
    print(f"REST calls of the bot: {r['rest_per_s']:.1f}/s under the global limit, "
          f"{r['all_rest_per_s']:.1f}/s with interaction answers")
    print("   per route (/s): " + ", ".join(f"{k} {v:.1f}" for k, v in r["routes"]))
    per = r["seconds"] / max(1, moves)  # from a rate to a count per move
    made = {k: v * per for k, v in _message_calls(r["routes"]).items()}
    print(f"per move: {r['rest_per_s'] * per:.2f} counted requests; messages created {made['created']:.2f}, "
          f"edited {made['edited']:.2f}, deleted {made['deleted']:.2f} "
          f"(of them through interaction tokens: {made['token created']:.2f} created, "
          f"{made['token edited']:.2f} edited, {made['token deleted']:.2f} deleted)")
    points = [p for p in r["rss"] if p[0] > 0]  # from the first step on: start-up allocations (fonts, pools) excluded
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in points) / max(1e-9, sum((x - mx) ** 2 for x in xs))
    print("RSS (after malloc_trim): " + ", ".join(f"{x} tables {y / 2**20:.1f} MiB" for x, y in r["rss"])
          + f"  -> {slope / 1024:.1f} KiB per live table")
    c = r["close"]
    mib = [x / 2**20 for x in c["rss"]]
    print(f"close: {c['lobbies']} lobbies opened then cancelled: tables held {c['held'][0]} -> {c['held'][1]} -> "
          f"{c['held'][2]} (live {c['live'][0]} -> {c['live'][1]} -> {c['live'][2]}); RSS {mib[0]:.1f} -> "
          f"{mib[1]:.1f} -> {mib[2]:.1f} MiB")
    check = r["check"]
    print(f"wrong: {r['unanswered']} unanswered, {len(r['violations'])} violations, {r['429']} 429s, "
          f"{len(check['differ'])} of {check['tables']} tables differ from a replay of their saved log")
    for v in r["violations"][:5]:
        print(f"   violation: {v}")


# --------------------------------------------------------------------------- restart
async def seed_tables(bench: Bench, count: int) -> None:
    from app.store import open_store
    from core.games.garbage import engine as garbage
    from core.games.nimmt import engine as nimmt

    games = {"nimmt": (nimmt.Nimmt, nimmt.greedy_player), "garbage": (garbage.Garbage, garbage.greedy_player)}
    store = await open_store(str(bench.db))
    now = time.time()
    try:
        for spec in bench.specs:
            cls, player = games[spec.game]
            seats = [{"user_id": u.id, "name": u.name, "away": False, "missed": 0} for u in spec.humans]
            seats += [{"user_id": None, "name": f"CPU {i + 1}", "away": False, "missed": 0}
                      for i in range(spec.computers)]
            options: dict[str, Any] = {"turn_time": 600}
            engine_options: dict[str, Any] = {}
            if spec.game == "nimmt":
                options["rounds"] = engine_options["rounds"] = 1
            seed = bench.rng.getrandbits(48)
            engine = cls.new(len(seats), seed, **engine_options)
            log: list[tuple[int, str]] = []
            rng = random.Random(seed)
            for _ in range(bench.rng.randrange(4, 30)):
                seat = engine.to_move
                if seat is None or engine.over:
                    break
                action = player(engine, seat, rng)
                engine.apply(seat, action)
                log.append((seat, str(action)))
            if engine.over:
                continue
            meta = {"host_id": spec.host.id, "max_seats": len(seats), "options": options, "locale": "en",
                    "seats": seats, "seed": seed, "messages": {}, "created_at": now, "started_at": now,
                    "turn_seat": engine.to_move, "turn_deadline": now + 600}
            spec.table_id = await store.create_table(spec.channel.guild_id, spec.channel.id, spec.game, meta)
            await store.save_table(spec.table_id, status="playing", meta=meta, actions=log)
    finally:
        await store.close()
    bench.specs = [s for s in bench.specs if s.table_id]


async def playable(bench: Bench, spec: Spec, deadline: float) -> float | None:
    """Click a button of the table until the table (not an error) answers; returns the time.

    The button is *Rules*: the bot answers it only for a table it has restored
    (an unknown table gets a line of text).  *My hand* would also draw 500
    hand pictures at once, which measures the painter, not the restart."""
    fd = bench.fd
    while time.perf_counter() < deadline:
        message = spec.table_msg
        try:
            r = await fd.click(spec.humans[0], message, f"table.rules:{spec.table_id}")
            if r.ack_type == 6:  # a deferred update of the table message; the rules follow privately
                await fd.wait_for(lambda: r.followups, timeout=max(0.1, deadline - time.perf_counter()))
                if r.followups[-1].embeds:
                    return time.perf_counter()
            elif r.message is not None and r.message.embeds:
                return time.perf_counter()
        except (LookupError, PermissionError, ValueError, AssertionError, TimeoutError):
            pass
        await asyncio.sleep(0.2)
    return None


async def run_restart(args: argparse.Namespace, count: int) -> dict[str, Any]:
    bench = Bench(args, f"restart{count}")
    fd = bench.fd
    await fd.start()
    rate = fd.global_rate
    fd.global_rate = None  # drawing the tables the first time is not what is measured
    report: dict[str, Any] = {"count": count, "load_start": os.getloadavg()}
    try:
        bench.build(count)
        await seed_tables(bench, count)
        report["tables"] = len(bench.specs)
        bench.spawn_bot("first")
        await bench.wait_bot_ready()
        await fd.wait_for(lambda: all(s.table_msg is not None for s in bench.specs), timeout=600, interval=0.2)
        await fd.wait_for(lambda: (bench.probe.poll() or {}).get("drawn", 0) >= len(bench.specs), timeout=300)
        await asyncio.sleep(2)
        assert bench.bot is not None
        bench.bot.send_signal(signal.SIGKILL)
        bench.bot.wait()
        await fd.wait_for(lambda: not fd.connected, timeout=30)
        fd.global_rate = rate
        bench.redrawn.clear()
        bench.spawn_bot("again")
        start = bench.spawned_at
        bench.redraw_since = start
        bench.probe.lines.clear()
        bench.probe.spans.clear()
        await bench.wait_bot_ready()
        report["ready_s"] = time.perf_counter() - start
        report["ready_cpu"] = _cpu(bench.bot.pid)
        deadline = time.perf_counter() + 120
        sem = asyncio.Semaphore(64)

        async def one(spec: Spec) -> float | None:
            async with sem:
                return await playable(bench, spec, deadline)

        done = await asyncio.gather(*(one(s) for s in bench.specs))
        answered = [x for x in done if x is not None]
        report["playable_s"] = (max(answered) - start) if answered else float("nan")
        report["playable"] = len(answered)
        report["playable_cpu"] = _cpu(bench.bot.pid)
        bench.probe.poll()
        report["spans"] = list(bench.probe.spans) + [("every table playable (bench)", report["playable_s"])]
        try:
            await fd.wait_for(lambda: len(bench.redrawn) >= len(bench.specs), timeout=300, interval=0.2)
        except TimeoutError:
            pass
        report["redrawn"] = len(bench.redrawn)
        report["redrawn_s"] = max(bench.redrawn.values(), default=float("nan"))
        report["check"] = await bench.replay_check()
        report["unanswered"] = fd.unanswered
        report["violations"] = list(fd.violations)
        report["429"] = sum(1 for r in fd.requests if r.status == 429)
        report["429_routes"] = _routes_429(fd)
        report["load_end"] = os.getloadavg()
    finally:
        await bench.close()
    return report


def _cpu(pid: int, stat: str | None = None) -> float:
    """CPU seconds (user + system) a process (or the thread whose ``stat`` file
    is given) has used so far: less noisy than the wall clock on a shared machine."""
    with open(stat or f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_split(bench: "Bench") -> dict[str, float]:
    """CPU seconds so far of every process of the run, the bot's loop thread apart
    from its other threads (aiosqlite, the painter, the pools' feeders): where the
    cores go.  The drawing processes are the bot's spawned children; the table
    pictures' one runs at a lower priority than the bot (``WORKER_NICENESS``)."""
    def nice(pid: int) -> int:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[16])

    out: dict[str, float] = {"benchmark (players, both stand-ins)": _cpu(os.getpid())}
    bot = bench.bot.pid if bench.bot is not None else None
    try:
        if bot is not None:
            loop = _cpu(bot, f"/proc/{bot}/task/{bot}/stat")
            out["bot, loop thread"] = loop
            out["bot, other threads"] = _cpu(bot) - loop
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                with contextlib.suppress(OSError, IndexError, ValueError):
                    with open(f"/proc/{entry}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                    with open(f"/proc/{entry}/cmdline", "rb") as f:
                        spawned = b"spawn_main" in f.read()
                    if ppid == bot and spawned:
                        which = "table pictures" if nice(int(entry)) > nice(bot) else "click pictures"
                        out[f"bot's {which} process"] = out.get(f"bot's {which} process", 0.0) + _cpu(int(entry))
        if bench.noop_pid is not None:
            out["no-op bot"] = _cpu(bench.noop_pid)
    except OSError:  # a process ended meanwhile: what was read stays
        pass
    return out


def print_restart(args: argparse.Namespace, r: dict[str, Any]) -> None:
    limit = f"global limit {args.global_rate}/s" if args.global_rate else "no global limit"
    print(f"\n== restart with {r['tables']} live tables saved (SIGKILL, then start again; {limit}); "
          f"load average at start {r['load_start'][0]:.2f}, at end {r['load_end'][0]:.2f}")
    print(f"   start -> ready (gateway READY, commands synced): {r['ready_s']:.2f} s")
    print(f"   start -> every table playable (a button answered by the table): {r['playable_s']:.2f} s "
          f"({r['playable']} of {r['tables']})")
    print(f"   the bot's own CPU from its start: {r['ready_cpu']:.2f} s to ready, "
          f"{r['playable_cpu']:.2f} s to every table playable")
    print(f"   start -> every table message redrawn: {r['redrawn_s']:.1f} s ({r['redrawn']} of {r['tables']})")
    print("   the start, seconds after the process was spawned: "
          + ", ".join(f"{name} {t:.2f}" for name, t in sorted(r["spans"], key=lambda s: s[1])))
    check = r["check"]
    print(f"   wrong: {r['unanswered']} unanswered, {len(r['violations'])} violations, {r['429']} 429s, "
          f"{len(check['differ'])} of {check['tables']} tables differ from a replay of their saved log")
    if r["429_routes"]:
        print(f"   429s by route: {r['429_routes']}")
    for v in r["violations"][:5]:
        print(f"   violation: {v}")


async def main_async(args: argparse.Namespace) -> None:
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {load()}; "
          f"global limit {args.global_rate or 'off'}/s, per-channel edits 5 per 5 s")
    for n in (n for n in args.tables if n):  # (--tables 0: the restart figure only)
        report = await run_load(args, n)
        print_load(args, report)
        sys.stdout.flush()
    if args.restart:
        report = await run_restart(args, args.restart)
        print_restart(args, report)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--tables", type=lambda s: [int(x) for x in s.split(",")], default=[100, 500],
                    help="live tables, comma-separated (default 100,500)")
    ap.add_argument("--seconds", type=float, default=60, help="seconds of play per N (default 60)")
    ap.add_argument("--think", type=float, default=4.0, help="mean thinking time before a turn, s (default 4)")
    ap.add_argument("--bystander", type=float, default=5.0,
                    help="mean seconds between lookups of each of 3 bystanders per server (default 5)")
    ap.add_argument("--restart", type=int, default=1000, help="live tables for the restart figure (0 = skip)")
    ap.add_argument("--global-rate", type=int, default=50, help="global requests/s of the bot token (0 = off)")
    ap.add_argument("--profile", action="store_true", help="cProfile the bot; print its top functions")
    ap.add_argument("--stalls", type=float, default=0, metavar="MS",
                    help="sample where the bot's loop thread is while the loop is over MS late (0 = off)")
    ap.add_argument("--spy", type=int, default=0,
                    help="with --restart: py-spy records the first SECONDS of the start again "
                         "(bench/out/load-restart*-start.spy, collapsed stacks)")
    ap.add_argument("--slow", type=float, default=0,
                    help="log every callback that holds the bot's loop longer than this many ms "
                         "(asyncio debug mode, in bench/out/load-*.log; slows the bot)")
    ap.add_argument("--child", choices=("bot", "noop"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child == "bot":
        return child_bot()
    if args.child == "noop":
        return child_noop()
    asyncio.run(main_async(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
