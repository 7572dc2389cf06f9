"""A local stand-in for Discord (REST + Gateway) that the unmodified discord.py client talks to.

Everything runs in the test's event loop on 127.0.0.1.  See ``tests/fakediscord/__init__.py`` for the
public API summary.
"""
from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import inspect
import json
import logging
import re
import time
import urllib.parse
import uuid
import zlib
from collections import deque, namedtuple
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import discord
import yarl
from aiohttp import WSMsgType, web

from . import validation
from .models import (
    FLAG_COMPONENTS_V2,
    FLAG_EPHEMERAL,
    FLAG_HAS_THREAD,
    FLAG_LOADING,
    FLAG_SUPPRESS_EMBEDS,
    FLAG_SUPPRESS_NOTIFICATIONS,
    Channel,
    Guild,
    InteractionResult,
    Member,
    Message,
    Role,
    User,
    iso,
)

log = logging.getLogger("fakediscord")

API_PREFIX = "/api/v10"
DISCORD_EPOCH_MS = 1420070400000
#: seconds after a channel's deletion within which a request through an interaction token
#: there is taken as already on its way (Discord's 404 only), not as a bot ignoring the news
DELETION_NEWS = 1.0

# gateway intents
INTENT_GUILDS = 1 << 0
INTENT_GUILD_MEMBERS = 1 << 1
INTENT_GUILD_VOICE_STATES = 1 << 7
INTENT_GUILD_MESSAGES = 1 << 9
INTENT_GUILD_MESSAGE_REACTIONS = 1 << 10
INTENT_DIRECT_MESSAGES = 1 << 12
INTENT_MESSAGE_CONTENT = 1 << 15
INTENT_GUILD_SCHEDULED_EVENTS = 1 << 16

P = discord.Permissions
ALL_PERMISSIONS = P.all().value
ADMINISTRATOR = P(administrator=True).value
VIEW_CHANNEL = P(view_channel=True).value
SEND_MESSAGES = P(send_messages=True).value
SEND_IN_THREADS = P(send_messages_in_threads=True).value
EMBED_LINKS = P(embed_links=True).value
ATTACH_FILES = P(attach_files=True).value
MANAGE_MESSAGES = P(manage_messages=True).value
MANAGE_THREADS = P(manage_threads=True).value
CREATE_PUBLIC_THREADS = P(create_public_threads=True).value
CREATE_PRIVATE_THREADS = P(create_private_threads=True).value
READ_HISTORY = P(read_message_history=True).value
ADD_REACTIONS = P(add_reactions=True).value
MANAGE_EVENTS = P(manage_events=True).value
CREATE_EVENTS = P(create_events=True).value
MENTION_EVERYONE = P(mention_everyone=True).value

ROLE_MENTION_RE = re.compile(r"<@&(\d+)>")

#: Guild Scheduled Event statuses and the changes Discord allows (SCHEDULED -> ACTIVE -> COMPLETED,
#: SCHEDULED -> CANCELED); a COMPLETED or CANCELED event cannot be changed at all (180000)
EVENT_SCHEDULED, EVENT_ACTIVE, EVENT_COMPLETED, EVENT_CANCELED = 1, 2, 3, 4
EVENT_TRANSITIONS = {EVENT_SCHEDULED: {EVENT_ACTIVE, EVENT_CANCELED}, EVENT_ACTIVE: {EVENT_COMPLETED}}

#: what @everyone may do in a fresh guild ("normal member")
DEFAULT_EVERYONE_PERMISSIONS = P(
    view_channel=True,
    create_instant_invite=True,
    change_nickname=True,
    send_messages=True,
    send_messages_in_threads=True,
    create_public_threads=True,
    create_private_threads=True,
    embed_links=True,
    attach_files=True,
    add_reactions=True,
    use_external_emojis=True,
    use_external_stickers=True,
    read_message_history=True,
    use_application_commands=True,
    connect=True,
    speak=True,
    stream=True,
    use_voice_activation=True,
).value

#: what the bot's managed role grants (a typical invite link)
DEFAULT_BOT_PERMISSIONS = P(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    create_public_threads=True,
    manage_threads=True,
    embed_links=True,
    attach_files=True,
    read_message_history=True,
    add_reactions=True,
    use_external_emojis=True,
    use_application_commands=True,
).value

RequestLog = namedtuple("RequestLog", "method path status time")

PermLike = Union[int, discord.Permissions, None]


def _perm(v: PermLike) -> int:
    if v is None:
        return 0
    if isinstance(v, discord.Permissions):
        return v.value
    return int(v)


class ApiError(Exception):
    def __init__(self, status: int, code: int, message: str, *, violation: Optional[str] = None,
                 errors: Any = None, headers: Optional[Dict[str, str]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.violation = violation
        self.errors = errors
        self.headers = headers or {}
        #: the whole JSON body to answer with instead of {"message", "code", "errors"} (an injected fault's own body)
        self.body: Any = None


#: one parameter of a header's value: ``; key=token`` or ``; key="quoted \\"string\\""``
_HEADER_PARAM = re.compile(r';\s*([^=;\s]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))')


def _header_params(value: str) -> Tuple[str, Dict[str, str]]:
    """``text/plain; charset="utf-8"`` -> ``("text/plain", {"charset": "utf-8"})``: a header's
    value in lower case and its parameters (quoted strings unescaped; a ``name*`` parameter
    of RFC 5987, ``utf-8''%C3%A9.png``, decoded and preferred to ``name``)."""
    head, sep, rest = value.partition(";")
    params: Dict[str, str] = {}
    extended: Dict[str, str] = {}
    for m in _HEADER_PARAM.finditer(sep + rest):
        key, quoted, token = m.group(1).lower(), m.group(2), m.group(3)
        val = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else token.strip()
        if key.endswith("*"):
            charset, _, encoded = val.partition("'")
            _lang, _, encoded = encoded.partition("'")
            with contextlib.suppress(LookupError, UnicodeDecodeError):
                extended[key[:-1]] = urllib.parse.unquote(encoded, encoding=charset or "utf-8", errors="strict")
        else:
            params[key] = val
    params.update(extended)
    return head.strip().lower(), params


def _multipart(raw: bytes, boundary: str) -> List[Tuple[Dict[str, str], bytes]]:
    """The parts of a ``multipart/form-data`` body: (headers with lower-case names, content).
    A body that is not one (no boundary, no closing delimiter) is Discord's 400."""
    if not boundary:
        raise ApiError(400, 50035, "Invalid Form Body", violation="multipart body without a boundary")
    delimiter = b"\r\n--" + boundary.encode("latin-1")
    pieces = (b"\r\n" + raw).split(delimiter)
    parts: List[Tuple[Dict[str, str], bytes]] = []
    for piece in pieces[1:]:
        if piece.startswith(b"--"):
            return parts
        head, sep, content = piece.partition(b"\r\n\r\n")
        if not sep:
            break
        headers: Dict[str, str] = {}
        for line in head.split(b"\r\n"):
            name, colon, value = line.decode("utf-8", "replace").partition(":")
            if colon:
                headers[name.strip().lower()] = value.strip()
        parts.append((headers, content))
    raise ApiError(400, 50035, "Invalid Form Body", violation="multipart body without its closing delimiter")


NONCE_WINDOW = 300.0  # seconds Discord keeps a message's nonce for enforce_nonce ("a few minutes")


class Hold:
    """REST calls of the bot that Discord is slow to answer (:meth:`FakeDiscord.hold`):
    each matching call waits, not yet carried out, until :meth:`release`."""

    def __init__(self, method: str, path_regex: str) -> None:
        self.method = method.upper()
        self.regex = re.compile(path_regex)
        #: the paths of the calls that came while held (they go on once released)
        self.caught: List[str] = []
        self._released = asyncio.Event()

    def matches(self, method: str, rel: str) -> bool:
        return not self._released.is_set() and self.method in ("*", method) and bool(self.regex.search(rel))

    async def wait(self, rel: str) -> None:
        self.caught.append(rel)
        await self._released.wait()

    def release(self) -> None:
        """Discord answers: the held calls are carried out, later ones are not held."""
        self._released.set()


class NoAcknowledgement(AssertionError):
    """The bot did not acknowledge an interaction within the deadline."""


def _json_response(data: Any, status: int = 200, headers: Optional[Dict[str, str]] = None) -> web.Response:
    h = {"Content-Type": "application/json"}
    if headers:
        h.update(headers)
    return web.Response(body=json.dumps(data).encode("utf-8"), status=status, headers=h)


def _empty(status: int = 204, headers: Optional[Dict[str, str]] = None) -> web.Response:
    return web.Response(status=status, headers=headers or {})


# ---------------------------------------------------------------------------------------------------------------
# gateway bookkeeping


class _Session:
    def __init__(self, sid: str, intents: int, shard: Optional[list]) -> None:
        self.id = sid
        self.intents = intents
        self.shard = shard
        self.seq = 0
        self.buffer: deque = deque(maxlen=2000)
        self.conn: Optional[_Conn] = None
        self.invalidated = False
        self.ready = False
        self.disconnected_at: Optional[float] = None

    def send_dispatch(self, event: str, data: Any) -> None:
        self.seq += 1
        text = json.dumps({"op": 0, "t": event, "s": self.seq, "d": data})
        self.buffer.append((self.seq, text))
        if self.conn is not None and not self.conn.closed:
            self.conn.queue.put_nowait(text)


class _Conn:
    def __init__(self, ws: web.WebSocketResponse, compress: Optional[str], interval: float) -> None:
        self.ws = ws
        # level 1: the bot inflates any level alike, and the stand-in shares the cores with the bot
        # in the load benchmark (level 6 was a twentieth of its CPU there)
        self.zctx = zlib.compressobj(1) if compress == "zlib-stream" else None
        self.queue: asyncio.Queue = asyncio.Queue()
        self.session: Optional[_Session] = None
        self.closed = False
        self.interval = interval
        self.last_heartbeat = time.monotonic()
        self.gap_flagged = False
        self.heartbeats = 0
        self.server_closed = False
        self.writer: Optional[asyncio.Task] = None

    def send_op(self, op: int, d: Any) -> None:
        self.queue.put_nowait(json.dumps({"op": op, "d": d, "s": None, "t": None}))


class _Interaction:
    def __init__(self, fd: "FakeDiscord", *, id: int, type: int, user: User, channel: Channel, guild: Optional[Guild],
                 data: Dict[str, Any], message: Optional[Message], name: str) -> None:
        self.fd = fd
        self.id = id
        self.token = "itk-" + uuid.uuid4().hex + uuid.uuid4().hex
        self.type = type
        self.user = user
        self.channel = channel
        self.guild = guild
        self.data = data
        self.message = message  # component/modal source message
        self.name = name
        loop = asyncio.get_running_loop()
        self.dispatched_at = loop.time()
        self.aged = 0.0  # seconds added to the token's age (:meth:`FakeDiscord.age_tokens`)
        self.ack_type: Optional[int] = None
        self.ack_flags = 0
        self.ack_time: Optional[float] = None
        self.ack_future: asyncio.Future = loop.create_future()
        self.expired = False
        self.response_message: Optional[Message] = None
        self.original: Optional[Message] = None
        self.original_replaced = False
        self.followups: List[Message] = []
        self.edits = 0
        self.first_edit_at: Optional[float] = None  # loop.time() of the first edit through this token
        self.modal: Optional[Dict[str, Any]] = None
        self.choices: Optional[List[Dict[str, Any]]] = None
        self.changed = asyncio.Event()
        self.edit_count_at_ack = 0
        self.claim: Optional[Dict[str, Any]] = None  # forged component shown in the payload's message

    @property
    def latency(self) -> Optional[float]:
        return None if self.ack_time is None else self.ack_time - self.dispatched_at

    def describe(self) -> str:
        return f"{self.name!r} by {self.user.name} in #{self.channel.name}"

    def is_settled(self) -> bool:
        if self.ack_type is None:
            return False
        if self.ack_type == 5:
            m = self.response_message
            return m is None or m.deleted or not m.loading
        if self.ack_type == 6:
            return self.edits > 0 or bool(self.followups) or (
                self.message is not None and (self.message.deleted or self.message.edit_count > self.edit_count_at_ack))
        return True

    def touch(self) -> None:
        self.changed.set()


# ---------------------------------------------------------------------------------------------------------------


class FakeDiscord:
    """In-process Discord stand-in.  ``await start()`` then point discord.py at it with :meth:`patched`."""

    def __init__(
        self,
        *,
        token: str = "fake-token",
        heartbeat_interval: int = 41250,
        edit_rate: Tuple[int, float] = (5, 5.0),
        ack_deadline: float = 3.0,
        bot_name: str = "FakeBot",
        host: str = "127.0.0.1",
        global_rate: Optional[Tuple[int, float]] = None,
        keep_history: bool = True,
        shard_count: int = 1,
        max_concurrency: int = 1,
        token_lifetime: float = 15 * 60,
    ) -> None:
        self.token = token
        #: seconds an interaction token may send followups and edit messages (Discord: 15 minutes)
        self.token_lifetime = token_lifetime
        #: the shard count ``GET /gateway/bot`` recommends; sessions route by the shard they IDENTIFY with
        self.shard_count = shard_count
        #: ``session_start_limit.max_concurrency``: shards that may IDENTIFY together per 5 s
        self.max_concurrency = max_concurrency
        self.heartbeat_interval = heartbeat_interval
        self.edit_rate = edit_rate
        #: Discord's global limit of a bot token (50 requests/s): (requests, seconds) or None (off).
        #: Interaction callbacks and interaction-token webhooks do not count, as on Discord.
        self.global_rate = global_rate
        #: False: edits keep no previous versions and replaced attachments are forgotten (long benchmarks)
        self.keep_history = keep_history
        #: callables ``(message, kind)`` told of every message change: kind "create", "edit" or "delete"
        self.message_listeners: List[Callable[[Message, str], None]] = []
        #: every member role the bot added or removed: (method, guild id, user id, role id)
        self.role_changes: List[Tuple[str, int, int, int]] = []
        self._global_bucket = [0.0, 0]
        self.ack_deadline = ack_deadline
        self.host = host
        self.port: Optional[int] = None
        self._id_counter = 0
        self._last_id = 0
        self.application_id = self._next_id()
        self.bot_user = User(id=self.application_id, name=bot_name, bot=True)
        self.owner = User(id=self._next_id(), name="app-owner")
        self.users: Dict[int, User] = {self.bot_user.id: self.bot_user, self.owner.id: self.owner}
        self.guilds: Dict[int, Guild] = {}
        self.channels: Dict[int, Channel] = {}
        self._messages: Dict[int, Message] = {}
        self._channel_messages: Dict[int, List[Message]] = {}
        self._dm_channels: Dict[int, Channel] = {}
        self._global_commands: List[Dict[str, Any]] = []
        self._guild_commands: Dict[int, List[Dict[str, Any]]] = {}
        self._interactions: Dict[int, _Interaction] = {}
        self._by_token: Dict[str, _Interaction] = {}
        self._attachments: Dict[int, Dict[str, Any]] = {}
        self.app_emojis: Dict[int, Dict[str, Any]] = {}
        self._failures: List[Dict[str, Any]] = []
        self._holds: List[Hold] = []
        self._nonces: Dict[Tuple[int, int, str], Tuple[float, int]] = {}  # (channel, author, nonce) -> (when, message)
        self._edit_buckets: Dict[int, List[float]] = {}
        self.violations: List[str] = []
        self.requests: List[RequestLog] = []
        self.intents: Optional[int] = None
        self.identify_count = 0
        #: the ``shard`` of every IDENTIFY, in order (None: unsharded)
        self.identified_shards: List[Optional[list]] = []
        self.resume_count = 0
        self.heartbeats = 0
        self._sessions: Dict[str, _Session] = {}
        self._conns: set = set()
        self._runner: Optional[web.AppRunner] = None
        self._ready_event: Optional[asyncio.Event] = None
        self._commands_event: Optional[asyncio.Event] = None
        self._watchdog: Optional[asyncio.Task] = None
        self._bg_tasks: set = set()
        self._routes = self._build_routes()

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> "FakeDiscord":
        self._ready_event = asyncio.Event()
        self._commands_event = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("GET", "/", self._gateway_handler)
        app.router.add_route("GET", "/attachments/{aid}/{filename}", self._attachment_handler)
        app.router.add_route("*", "/{tail:.*}", self._rest_handler)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        self._watchdog = asyncio.create_task(self._heartbeat_watchdog())
        return self

    async def stop(self) -> None:
        if self._watchdog:
            self._watchdog.cancel()
            with contextlib.suppress(BaseException):
                await self._watchdog
            self._watchdog = None
        self._check_heartbeat_gaps()
        for conn in list(self._conns):
            await self._close_conn(conn, 1001)
        for held in self._holds:
            held.release()
        for t in list(self._bg_tasks):
            t.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> "FakeDiscord":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    @property
    def api_base(self) -> str:
        return f"http://{self.host}:{self.port}{API_PREFIX}"

    @property
    def gateway_url(self) -> str:
        return f"ws://{self.host}:{self.port}/"

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @contextlib.contextmanager
    def patched(self):
        """Point discord.py (this process) at the stand-in; restores the previous values on exit."""
        from discord import gateway, http

        old_base = http.Route.BASE
        old_gw = gateway.DiscordWebSocket.DEFAULT_GATEWAY
        http.Route.BASE = self.api_base
        gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.gateway_url)
        try:
            yield self
        finally:
            http.Route.BASE = old_base
            gateway.DiscordWebSocket.DEFAULT_GATEWAY = old_gw

    def env(self) -> Dict[str, str]:
        """Environment for a bot started through ``python -m tests.fakediscord.launch module:function``."""
        return {
            "FAKEDISCORD_API": self.api_base,
            "FAKEDISCORD_GATEWAY": self.gateway_url,
            "FAKEDISCORD_TOKEN": self.token,
        }

    # ------------------------------------------------------------------ ids / misc
    def _next_id(self) -> int:
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        self._id_counter = (self._id_counter + 1) & 0xFFF
        sid = (ms << 22) | (1 << 17) | self._id_counter
        if sid <= self._last_id:
            sid = self._last_id + 1
        self._last_id = sid
        return sid

    def _id_on_shard(self, shard: int, shard_count: int) -> int:
        """A fresh snowflake whose timestamp puts it on ``shard`` of ``shard_count``
        (``(id >> 22) % shard_count``): the next millisecond that lands there."""
        if not 0 <= shard < shard_count:
            raise ValueError(f"shard {shard} is not one of 0..{shard_count - 1}")
        sid = self._next_id()
        ms, low = sid >> 22, sid & ((1 << 22) - 1)
        while ms % shard_count != shard:  # a later millisecond: still unique and increasing
            ms += 1
        sid = (ms << 22) | low
        self._last_id = sid
        return sid

    def shard_of(self, guild: Union["Guild", int, None], shard_count: Optional[int] = None) -> int:
        """The shard Discord sends this server's events to (DMs: shard 0)."""
        if guild is None:
            return 0
        gid = guild if isinstance(guild, int) else guild.id
        return (gid >> 22) % (shard_count or self.shard_count)

    @staticmethod
    def _session_gets(s: "_Session", guild_id: Optional[int]) -> bool:
        """Discord's routing: a server's events go to the session of its shard, DMs to shard 0."""
        shard_id, count = (s.shard or [0, 1])[:2]
        if guild_id is None:
            return shard_id == 0
        return (guild_id >> 22) % count == shard_id

    def violation(self, text: str) -> None:
        log.warning("fakediscord violation: %s", text)
        self.violations.append(text)

    def assert_clean(self, ignore: Sequence[str] = ()) -> None:
        """Raise AssertionError listing the recorded violations (those matching a regex in ``ignore`` excepted)."""
        left = [v for v in self.violations if not any(re.search(p, v) for p in ignore)]
        if left:
            raise AssertionError("Discord stand-in recorded %d violation(s):\n  - %s" % (len(left), "\n  - ".join(left)))

    def take_violations(self, pattern: Optional[str] = None) -> List[str]:
        """Remove and return violations (matching ``pattern`` if given) - for tests that expect them."""
        taken = [v for v in self.violations if pattern is None or re.search(pattern, v)]
        self.violations = [v for v in self.violations if v not in taken]
        return taken

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task:
        t = asyncio.ensure_future(coro)
        self._bg_tasks.add(t)
        t.add_done_callback(self._bg_tasks.discard)
        return t

    # ------------------------------------------------------------------ world building
    def add_user(self, name: str, *, locale: str = "en-US", bot: bool = False, dms_open: bool = True,
                 global_name: Optional[str] = None, id: Optional[int] = None) -> User:
        """``id``: a snowflake the user already has (a world saved by an earlier run), else a new one."""
        u = User(id=self._next_id() if id is None else id, name=name, locale=locale, bot=bot, dms_open=dms_open, global_name=global_name)
        self.users[u.id] = u
        return u

    def add_guild(self, name: str = "Test Guild", *, locale: str = "en-US", owner: Optional[User] = None,
                  bot_permissions: PermLike = None, everyone_permissions: PermLike = None,
                  shard: Optional[int] = None, shard_count: Optional[int] = None, id: Optional[int] = None) -> Guild:
        gid = id or (self._next_id() if shard is None else self._id_on_shard(shard, shard_count or self.shard_count))
        owner = owner or self.owner
        g = Guild(id=gid, name=name, locale=locale, owner_id=owner.id)
        g.roles[gid] = Role(id=gid, guild_id=gid, name="@everyone",
                            permissions=DEFAULT_EVERYONE_PERMISSIONS if everyone_permissions is None else _perm(everyone_permissions))
        bot_role = Role(id=self._next_id(), guild_id=gid, name=self.bot_user.name, position=1, managed=True,
                        bot_id=self.bot_user.id,
                        permissions=DEFAULT_BOT_PERMISSIONS if bot_permissions is None else _perm(bot_permissions))
        g.roles[bot_role.id] = bot_role
        g.bot_role_id = bot_role.id
        self.guilds[gid] = g
        g.members[owner.id] = Member(user=owner, guild_id=gid)
        g.members[self.bot_user.id] = Member(user=self.bot_user, guild_id=gid, roles=[bot_role.id])
        if self._live_sessions():
            self._dispatch("GUILD_CREATE", None, transform=lambda s, _: self._guild_payload(g, s), guild_id=gid)
        return g

    def add_role(self, guild: Guild, name: str, permissions: PermLike = 0, *, mentionable: bool = False) -> Role:
        r = Role(id=self._next_id(), guild_id=guild.id, name=name, permissions=_perm(permissions),
                 position=len(guild.roles), mentionable=mentionable)
        guild.roles[r.id] = r
        self._dispatch("GUILD_ROLE_CREATE", {"guild_id": str(guild.id), "role": r.payload()}, intent=INTENT_GUILDS)
        return r

    def add_channel(self, guild: Guild, name: str, *, type: int = 0, topic: Optional[str] = None,
                    id: Optional[int] = None) -> Channel:
        ch = Channel(id=self._next_id() if id is None else id, type=type, name=name, guild_id=guild.id, topic=topic,
                     position=len([c for c in guild.channels.values() if not c.is_thread]))
        guild.channels[ch.id] = ch
        self.channels[ch.id] = ch
        self._channel_messages[ch.id] = []
        self._dispatch("CHANNEL_CREATE", ch.payload(), intent=INTENT_GUILDS)
        return ch

    def add_member(self, guild: Guild, user: User, *, permissions: PermLike = None, manage_messages: bool = False,
                   manage_guild: bool = False, administrator: bool = False, roles: Iterable[Role] = (),
                   nick: Optional[str] = None) -> Member:
        """Make ``user`` a member.  Extra permissions are granted through a role named ``<user>-perms``."""
        extra = _perm(permissions)
        if manage_messages:
            extra |= MANAGE_MESSAGES
        if manage_guild:
            extra |= P(manage_guild=True).value
        if administrator:
            extra |= ADMINISTRATOR
        role_ids = [r.id for r in roles]
        if extra:
            r = Role(id=self._next_id(), guild_id=guild.id, name=f"{user.name}-perms", permissions=extra,
                     position=len(guild.roles))
            guild.roles[r.id] = r
            role_ids.append(r.id)
        m = Member(user=user, guild_id=guild.id, roles=role_ids, nick=nick)
        guild.members[user.id] = m
        if self._live_sessions():
            for r in guild.roles.values():
                if r.id in role_ids:
                    self._dispatch("GUILD_ROLE_CREATE", {"guild_id": str(guild.id), "role": r.payload()}, intent=INTENT_GUILDS)
            self._dispatch("GUILD_MEMBER_ADD", {**m.payload(), "guild_id": str(guild.id)}, intent=INTENT_GUILD_MEMBERS)
        return m

    def join_voice(self, user: User, channel: Channel) -> None:
        """``user`` connects to (or moves to) voice ``channel``: VOICE_STATE_UPDATE,
        as Discord sends it to bots with the GUILD_VOICE_STATES intent."""
        if channel.type not in (2, 13):
            raise ValueError(f"{channel!r} is not a voice channel")
        guild = self.guild_of(channel)
        if guild is None:
            raise ValueError(f"{channel!r} is not in a server")
        if user.id not in guild.members:
            raise PermissionError(f"{user.name} is not a member of {guild.name}")
        guild.voice[user.id] = channel.id
        self._dispatch("VOICE_STATE_UPDATE", self._voice_state(guild, user.id, channel.id, with_guild=True),
                       intent=INTENT_GUILD_VOICE_STATES)

    def leave_voice(self, user: User, guild: Guild) -> None:
        """``user`` disconnects from voice in ``guild`` (channel_id null)."""
        if guild.voice.pop(user.id, None) is None:
            return
        self._dispatch("VOICE_STATE_UPDATE", self._voice_state(guild, user.id, None, with_guild=True),
                       intent=INTENT_GUILD_VOICE_STATES)

    def _voice_state(self, guild: Guild, user_id: int, channel_id: Optional[int], *,
                     with_guild: bool) -> Dict[str, Any]:
        d: Dict[str, Any] = {
            "channel_id": str(channel_id) if channel_id else None, "user_id": str(user_id),
            "session_id": f"voice-{user_id}", "deaf": False, "mute": False, "self_deaf": False,
            "self_mute": False, "self_stream": False, "self_video": False, "suppress": False,
            "request_to_speak_timestamp": None,
        }
        if with_guild:  # the event names its guild and member; GUILD_CREATE's list does not
            d["guild_id"] = str(guild.id)
            d["member"] = guild.members[user_id].payload()
        return d

    def set_channel_overwrite(self, channel: Channel, target: Union[None, User, Role, Member, Guild] = None, *,
                              allow: PermLike = 0, deny: PermLike = 0) -> None:
        """Set a permission overwrite on ``channel`` (for threads: on the parent).  target None = @everyone."""
        ch = self._perm_channel(channel)
        if target is None or isinstance(target, Guild):
            if ch.guild_id is None:
                raise ValueError(f"{channel!r} is not in a server: it has no permission overwrites")
            tid, ttype = ch.guild_id, 0
        elif isinstance(target, Role):
            tid, ttype = target.id, 0
        elif isinstance(target, Member):
            tid, ttype = target.user.id, 1
        else:
            tid, ttype = target.id, 1
        ch.overwrites[tid] = (ttype, _perm(allow), _perm(deny))
        self._dispatch("CHANNEL_UPDATE", ch.payload(), intent=INTENT_GUILDS)

    def set_role_permissions(self, role: Role, permissions: PermLike) -> None:
        role.permissions = _perm(permissions)
        self._dispatch("GUILD_ROLE_UPDATE", {"guild_id": str(role.guild_id), "role": role.payload()}, intent=INTENT_GUILDS)

    def add_thread(self, channel: Channel, name: str, *, owner: Optional[User] = None, private: bool = False,
                   id: Optional[int] = None) -> Channel:
        """A user creates a thread (without starter message) in ``channel``; ``id``: the
        snowflake it already has (a world saved by an earlier run)."""
        return self._create_thread(channel, name, owner or self.owner, type_=12 if private else 11, starter=None,
                                   id=id)

    def add_message(self, channel: Channel, author: User, *, id: int, content: str = "",
                    embeds: Sequence[Dict[str, Any]] = (), components: Sequence[Dict[str, Any]] = (),
                    flags: int = 0) -> Message:
        """A message that is already in ``channel`` with the snowflake ``id`` (posted before this
        stand-in started, e.g. by an earlier version of a bot): no gateway event, nobody pinged."""
        m = Message(id=id, channel_id=channel.id, author=author, content=content, embeds=list(embeds),
                    components=list(components), flags=flags, guild_id=channel.guild_id)
        self._messages[m.id] = m
        self._channel_messages.setdefault(channel.id, []).append(m)
        self._channel_messages[channel.id].sort(key=lambda message: message.id)
        channel.last_message_id = max(channel.last_message_id or 0, m.id)
        self._last_id = max(self._last_id, m.id)
        return m

    def archive_thread(self, thread: Channel, *, locked: bool = False) -> None:
        thread.archived = True
        thread.locked = locked
        thread.archive_timestamp = iso()
        self._dispatch("THREAD_UPDATE", thread.payload(), intent=INTENT_GUILDS)

    # ------------------------------------------------------------------ queries
    def _as_channel(self, channel: Union[Channel, int, str]) -> Channel:
        if isinstance(channel, Channel):
            return channel
        ch = self.channels.get(int(channel))
        if ch is None:
            raise LookupError(f"unknown channel {channel!r}")
        return ch

    def guild_of(self, channel: Channel) -> Optional[Guild]:
        return self.guilds.get(channel.guild_id) if channel.guild_id else None

    def channel(self, channel_id: int) -> Optional[Channel]:
        return self.channels.get(int(channel_id))

    def message(self, message_id: int) -> Optional[Message]:
        return self._messages.get(int(message_id))

    def messages(self, channel: Channel, *, include_deleted: bool = False) -> List[Message]:
        """Public messages of a channel or thread, oldest first."""
        channel = self._as_channel(channel)
        return [m for m in self._channel_messages.get(channel.id, [])
                if m.ephemeral_to is None and (include_deleted or not m.deleted)]

    def ephemerals(self, user: User, channel: Optional[Channel] = None, *,
                   include_deleted: bool = False) -> List[Message]:
        """Ephemeral messages only ``user`` can see (optionally only in ``channel``), oldest first."""
        return [m for m in self._messages.values()
                if m.ephemeral_to == user.id and (include_deleted or not m.deleted)
                and (channel is None or m.channel_id == channel.id)]

    def visible_messages(self, user: User, channel: Channel) -> List[Message]:
        """What ``user`` sees in ``channel``: public messages plus their own ephemerals, in order."""
        return [m for m in self._channel_messages.get(channel.id, [])
                if not m.deleted and (m.ephemeral_to is None or m.ephemeral_to == user.id)]

    def dms(self, user: User) -> List[Message]:
        ch = self._dm_channels.get(user.id)
        return self.messages(ch) if ch else []

    def threads(self, channel: Channel, *, include_deleted: bool = False) -> List[Channel]:
        channel = self._as_channel(channel)
        return [c for c in self.channels.values()
                if c.is_thread and c.parent_id == channel.id and (include_deleted or not c.deleted)]

    def commands(self, guild: Union[Guild, int, None] = None) -> List[Dict[str, Any]]:
        if guild is None:
            return list(self._global_commands)
        gid = guild.id if isinstance(guild, Guild) else int(guild)
        return list(self._guild_commands.get(gid, []))

    def member(self, guild: Guild, user: User) -> Optional[Member]:
        return guild.members.get(user.id)

    # ------------------------------------------------------------------ waiting
    async def wait_ready(self, timeout: float = 10) -> None:
        """Wait until a bot session is connected and has received READY + its GUILD_CREATEs (or RESUMED)."""
        if self._ready_event is None:
            raise RuntimeError("FakeDiscord not started")
        try:
            await self.wait_for(self._has_ready_session, timeout, what="a connected, ready bot session")
        except TimeoutError as e:
            raise TimeoutError(f"timed out after {timeout}s waiting for the bot to IDENTIFY and receive READY + "
                               f"GUILD_CREATE.{self._diagnostics()}") from e

    def _has_ready_session(self, guild_id: Optional[int] = None, *, any_guild: bool = True) -> bool:
        return any(s.ready and s.conn is not None and not s.conn.closed
                   and (any_guild or self._session_gets(s, guild_id)) for s in self._live_sessions())

    def ready_shards(self) -> Dict[int, int]:
        """Shard id -> ready, connected sessions identified with it (unsharded sessions count as shard 0)."""
        out: Dict[int, int] = {}
        for s in self._live_sessions():
            if s.ready and s.conn is not None and not s.conn.closed:
                shard_id = (s.shard or [0, 1])[0]
                out[shard_id] = out.get(shard_id, 0) + 1
        return out

    async def wait_shards(self, shard_ids: Iterable[int], timeout: float = 10) -> None:
        """Wait until every one of ``shard_ids`` has a ready, connected session."""
        wanted = set(shard_ids)
        await self.wait_for(lambda: wanted <= set(self.ready_shards()), timeout,
                            what=f"ready sessions for shards {sorted(wanted)}")

    @property
    def connected(self) -> bool:
        """Whether a bot session is connected and ready right now."""
        return self._has_ready_session()

    async def wait_commands(self, timeout: float = 10) -> List[Dict[str, Any]]:
        await self._wait_event(self._commands_event, timeout, "the bot to sync application commands")
        return self.commands() + [c for cmds in self._guild_commands.values() for c in cmds]

    async def _wait_event(self, ev: Optional[asyncio.Event], timeout: float, what: str) -> None:
        if ev is None:
            raise RuntimeError("FakeDiscord not started")
        try:
            await asyncio.wait_for(ev.wait(), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}.{self._diagnostics()}") from None

    def _diagnostics(self) -> str:
        reqs = ", ".join(f"{r.method} {r.path} -> {r.status}" for r in self.requests[-8:]) or "none"
        viol = "; ".join(self.violations[-5:]) or "none"
        return (f"\n  gateway: {len(self._conns)} connection(s), identify={self.identify_count}, resume={self.resume_count}"
                f"\n  last requests: {reqs}\n  violations: {viol}")

    def age_tokens(self, seconds: float) -> None:
        """As if ``seconds`` had passed for every interaction token issued so far (their
        followups and edits are refused once older than ``token_lifetime``, as Discord
        does): what a bot does with expired tokens, without waiting 15 minutes."""
        for rec in self._by_token.values():
            rec.aged += seconds

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 10, *, interval: float = 0.02,
                       what: Optional[str] = None) -> Any:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            v = predicate()
            if inspect.isawaitable(v):
                v = await v
            if v:
                return v
            if loop.time() >= deadline:
                name = what or getattr(predicate, "__qualname__", repr(predicate))
                raise TimeoutError(f"wait_for({name}) still false after {timeout}s.{self._diagnostics()}")
            await asyncio.sleep(interval)

    async def wait_message(self, channel: Channel, predicate: Union[None, str, Callable[[Message], Any]] = None,
                           timeout: float = 10, *, after: Union[Message, int, None] = None) -> Message:
        """Wait for a public message in ``channel`` matching ``predicate`` (callable, or substring of text()).
        ``after``: only messages newer than this message/id."""
        channel = self._as_channel(channel)
        after_id = after.id if isinstance(after, Message) else (after or 0)

        def match(m: Message) -> bool:
            if m.id <= after_id:
                return False
            if predicate is None:
                return True
            if isinstance(predicate, str):
                return predicate in m.text()
            return bool(predicate(m))

        def find() -> Optional[Message]:
            for m in self.messages(channel):
                if match(m):
                    return m
            return None

        try:
            return await self.wait_for(find, timeout, what=f"message in #{channel.name} matching {predicate!r}")
        except TimeoutError as e:
            seen = "\n    ".join(repr(m) for m in self.messages(channel)[-8:]) or "(none)"
            raise TimeoutError(f"{e}\n  messages in #{channel.name}:\n    {seen}") from None

    # ------------------------------------------------------------------ failure injection / user actions
    def fail_next(self, method: str, path_regex: str, status: int = 500, times: int = 1, json: Any = None,
                  retry_after: float = 0.25, *, after: bool = False, message: Optional[int] = None) -> None:
        """The next ``times`` REST calls matching (method or "*", regex searched in the path after /api/v10)
        get ``status``.  429s carry Via/Retry-After headers and ``retry_after`` in the body.  ``status=0``
        drops the connection without an answer (logged with status 0).  ``after``: the call is carried
        out first and only its answer fails (a 5xx of Discord's edge, a connection lost on the way
        back): the message is posted or edited all the same, the client cannot tell.  ``message``:
        only calls on that message, whichever way the path names it (its id, or ``@original`` of
        an interaction's token whose original message it is): the edits of one message, not of
        whatever other message is edited meanwhile."""
        self._failures.append({"method": method.upper(), "regex": re.compile(path_regex), "status": status,
                               "times": times, "json": json, "retry_after": retry_after, "after": after,
                               "message": message})

    def hold(self, method: str, path_regex: str) -> Hold:
        """Discord is slow to answer the bot's REST calls matching (method or "*", regex
        searched in the path after /api/v10): each waits, not carried out yet, until the
        returned :class:`Hold` is released (by the test, or when the stand-in stops).  For a
        state that must last until the test has looked (a message the bot is deleting)."""
        held = Hold(method, path_regex)
        self._holds.append(held)
        return held

    def clear_failures(self) -> int:
        """Forget the failures :meth:`fail_next` armed that no call used yet; returns how many."""
        left = sum(f["times"] for f in self._failures)
        self._failures.clear()
        return left

    def delete_message(self, message: Message) -> None:
        """A user (moderator) deletes a message."""
        self._delete_message(message)

    def delete_channel(self, channel: Channel) -> None:
        """An admin deletes a channel or thread (and its threads)."""
        for t in self.threads(channel):
            self.delete_channel(t)
        channel.deleted = True
        channel.deleted_at = asyncio.get_running_loop().time()
        if channel.is_thread:
            self._dispatch("THREAD_DELETE", {"id": str(channel.id), "guild_id": str(channel.guild_id),
                                             "parent_id": str(channel.parent_id), "type": channel.type},
                           intent=INTENT_GUILDS)
        else:
            self._dispatch("CHANNEL_DELETE", channel.payload(), intent=INTENT_GUILDS)

    def send(self, user: User, channel: Channel, content: str = "", *, embeds: Optional[list] = None) -> Message:
        """A user posts a message (dispatched as MESSAGE_CREATE)."""
        guild = self.guild_of(channel)
        if guild is not None and user.id not in guild.members:
            raise ValueError(f"{user} is not a member of {guild}")
        msg = self._new_message(channel, user, {"content": content, "embeds": embeds or []}, [])
        self._dispatch_message("MESSAGE_CREATE", msg)
        return msg

    def react(self, user: User, message: Message, emoji: str) -> None:
        message.reactions.setdefault(emoji, set()).add(user.id)
        ch = self.channels[message.channel_id]
        self._dispatch("MESSAGE_REACTION_ADD", {
            "user_id": str(user.id), "channel_id": str(ch.id), "message_id": str(message.id),
            "guild_id": str(ch.guild_id) if ch.guild_id else None, "emoji": {"id": None, "name": emoji},
            "burst": False, "type": 0,
            "member": self.guilds[ch.guild_id].members[user.id].payload() if ch.guild_id and user.id in self.guilds[ch.guild_id].members else None,
        }, intent=INTENT_GUILD_MESSAGE_REACTIONS)

    def drop_gateway(self, code: int = 4000, *, resumable: bool = True) -> asyncio.Task:
        """Close the bot's gateway socket(s).  ``resumable=False`` invalidates the sessions too (the bot
        must IDENTIFY again).  Returns a task; awaiting it is optional."""
        if not resumable:
            for s in self._sessions.values():
                s.invalidated = True

        async def go() -> None:
            for conn in list(self._conns):
                await self._close_conn(conn, code)

        return self._spawn(go())

    def request_reconnect(self) -> None:
        """Send op 7 RECONNECT to the bot's connection(s), as Discord does now and then: the bot should
        reconnect and RESUME."""
        for conn in list(self._conns):
            if conn.session is not None:
                conn.send_op(7, None)

    # ------------------------------------------------------------------ permissions
    def _perm_channel(self, channel: Channel) -> Channel:
        if channel.is_thread and channel.parent_id:
            return self.channels[channel.parent_id]
        return channel

    def base_permissions(self, guild: Guild, user: User) -> int:
        if guild.owner_id == user.id:
            return ALL_PERMISSIONS
        m = guild.members.get(user.id)
        if m is None:
            return 0
        perms = guild.everyone.permissions
        for rid in m.roles:
            r = guild.roles.get(rid)
            if r:
                perms |= r.permissions
        if perms & ADMINISTRATOR:
            return ALL_PERMISSIONS
        return perms

    def permissions_in(self, channel: Channel, user: User) -> int:
        """Effective permissions of ``user`` in ``channel`` (Discord's overwrite algorithm)."""
        guild = self.guild_of(channel)
        if guild is None:
            return P.text().value | VIEW_CHANNEL
        base = self.base_permissions(guild, user)
        if base & ADMINISTRATOR or base == ALL_PERMISSIONS:
            return ALL_PERMISSIONS
        ch = self._perm_channel(channel)
        perms = base
        ow = ch.overwrites
        if guild.id in ow:
            _, a, d = ow[guild.id]
            perms = (perms & ~d) | a
        m = guild.members.get(user.id)
        roles = m.roles if m else []
        allow = deny = 0
        for rid in roles:
            if rid in ow:
                _, a, d = ow[rid]
                allow |= a
                deny |= d
        perms = (perms & ~deny) | allow
        if user.id in ow:
            _, a, d = ow[user.id]
            perms = (perms & ~d) | a
        if not perms & VIEW_CHANNEL:
            return 0
        return perms

    def _require(self, channel: Channel, bits: int, what: str) -> None:
        have = self.permissions_in(channel, self.bot_user)
        if have & bits != bits:
            missing = [n for n, v in P(bits & ~have) if v]
            raise ApiError(403, 50013, f"Missing Permissions ({what}: {', '.join(missing)})")

    # ------------------------------------------------------------------ payloads
    def _guild_payload(self, g: Guild, session: Optional[_Session]) -> Dict[str, Any]:
        intents = session.intents if session else ALL_PERMISSIONS
        members = list(g.members.values())
        if not intents & INTENT_GUILD_MEMBERS:
            # as Discord: without the members intent, only the bot and the people in voice channels
            in_voice = set(g.voice) if intents & INTENT_GUILD_VOICE_STATES else set()
            members = [m for m in members if m.user.id == self.bot_user.id or m.user.id in in_voice]
        chans = [c for c in g.channels.values() if not c.deleted]
        voice = ([self._voice_state(g, uid, cid, with_guild=False) for uid, cid in g.voice.items()]
                 if intents & INTENT_GUILD_VOICE_STATES else [])
        return {
            "id": str(g.id),
            "name": g.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "owner_id": str(g.owner_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 1,
            "explicit_content_filter": 0,
            "roles": [r.payload() for r in g.roles.values()],
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "safety_alerts_channel_id": None,
            "vanity_url_code": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": g.locale,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "max_members": 500000,
            "max_video_channel_users": 25,
            "joined_at": g.joined_at,
            "large": False,
            "unavailable": False,
            "member_count": len(g.members),
            "voice_states": voice,
            "members": [m.payload() for m in members],
            "channels": [c.payload() for c in chans if not c.is_thread],
            "threads": [c.payload() for c in chans if c.is_thread and not c.archived],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [dict(e) for e in g.scheduled_events.values()
                                       if e["status"] in (EVENT_SCHEDULED, EVENT_ACTIVE)],
            "soundboard_sounds": [],
            "incidents_data": None,
            "lazy": True,
        }

    def _attachment_payload(self, a: Dict[str, Any], ephemeral: bool = False) -> Dict[str, Any]:
        url = f"{self.base_url}/attachments/{a['id']}/{a['filename']}"
        d = {
            "id": str(a["id"]),
            "filename": a["filename"],
            "size": len(a["data"]),
            "url": url,
            "proxy_url": url,
            "content_type": a.get("content_type"),
            "height": None,
            "width": None,
        }
        if a.get("description"):
            d["description"] = a["description"]
        if ephemeral:
            d["ephemeral"] = True
        return d

    def _message_payload(self, m: Message, *, gateway: bool = False, depth: int = 0) -> Dict[str, Any]:
        mentions = [self.users[i].payload() for i in m.mentions if i in self.users]
        d: Dict[str, Any] = {
            "id": str(m.id),
            "channel_id": str(m.channel_id),
            "author": m.author.payload(),
            "content": m.content,
            "timestamp": m.timestamp,
            "edited_timestamp": m.edited_timestamp,
            "tts": m.tts,
            "mention_everyone": False,
            "mentions": mentions,
            "mention_roles": [],
            "attachments": [self._attachment_payload(a, m.ephemeral) for a in m.attachments],
            "embeds": m.embeds,
            "pinned": m.pinned,
            "type": m.type,
            "flags": m.flags,
            "components": m.components,
        }
        if m.reactions:
            d["reactions"] = [
                {"emoji": {"id": None, "name": e}, "count": len(us), "me": self.bot_user.id in us,
                 "count_details": {"burst": 0, "normal": len(us)}, "burst_colors": [], "me_burst": False}
                for e, us in m.reactions.items() if us
            ]
        if m.webhook_id:
            d["webhook_id"] = str(m.webhook_id)
            d["application_id"] = str(m.application_id or m.webhook_id)
        if m.interaction:
            it = m.interaction
            user = self.users[it["user_id"]]
            meta = {
                "id": str(it["id"]),
                "type": it["type"],
                "user": user.payload(),
                "authorizing_integration_owners": {"0": str(m.guild_id)} if m.guild_id else {"1": str(user.id)},
            }
            if it.get("name"):
                meta["name"] = it["name"]
            if it.get("interacted_message_id"):
                meta["interacted_message_id"] = str(it["interacted_message_id"])
            if it.get("original_response_message_id"):
                meta["original_response_message_id"] = str(it["original_response_message_id"])
            d["interaction_metadata"] = meta
            if it["type"] == 2:
                d["interaction"] = {"id": str(it["id"]), "type": it["type"], "name": it.get("name", ""),
                                    "user": user.payload()}
        if m.message_reference:
            d["message_reference"] = m.message_reference
            if depth == 0:
                ref = self._messages.get(int(m.message_reference.get("message_id", 0) or 0))
                d["referenced_message"] = (self._message_payload(ref, depth=1)
                                           if ref is not None and not ref.deleted else None)
        if m.thread_id and m.thread_id in self.channels and not self.channels[m.thread_id].deleted:
            d["thread"] = self.channels[m.thread_id].payload()
        if gateway and m.guild_id:
            d["guild_id"] = str(m.guild_id)
            g = self.guilds.get(m.guild_id)
            if g and not m.webhook_id and m.author.id in g.members:
                d["member"] = g.members[m.author.id].payload(with_user=False)
        return d

    # ------------------------------------------------------------------ gateway
    def _live_sessions(self) -> List[_Session]:
        now = time.monotonic()
        out = []
        for sid, s in list(self._sessions.items()):
            if s.invalidated:
                continue
            if s.conn is None and s.disconnected_at is not None and now - s.disconnected_at > 120:
                continue
            out.append(s)
        return out

    def _dispatch(self, event: str, data: Any, *, intent: Optional[int] = None,
                  transform: Optional[Callable[[_Session, Any], Any]] = None,
                  guild_id: Optional[int] = None) -> None:
        if guild_id is None and isinstance(data, dict) and data.get("guild_id"):
            guild_id = int(data["guild_id"])
        for s in self._live_sessions():
            if intent is not None and not s.intents & intent:
                continue
            if not self._session_gets(s, guild_id):
                continue
            d = transform(s, data) if transform else data
            if d is None:
                continue
            s.send_dispatch(event, d)

    def _dispatch_message(self, event: str, m: Message) -> None:
        if m.ephemeral_to is not None:
            return
        ch = self.channels.get(m.channel_id)
        intent = INTENT_DIRECT_MESSAGES if ch is not None and ch.type == 1 else INTENT_GUILD_MESSAGES
        payload = self._message_payload(m, gateway=True)

        def redact(s: _Session, d: Dict[str, Any]) -> Dict[str, Any]:
            if s.intents & INTENT_MESSAGE_CONTENT or m.author.id == self.bot_user.id or (ch and ch.type == 1) \
                    or self.bot_user.id in m.mentions:
                return d
            return {**d, "content": "", "embeds": [], "attachments": [], "components": []}

        self._dispatch(event, payload, intent=intent, transform=redact)

    async def _gateway_handler(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=0, autoping=True)
        await ws.prepare(request)
        compress = request.query.get("compress")
        if request.query.get("v") not in (None, "10"):
            self.violation(f"gateway connected with v={request.query.get('v')}")
        conn = _Conn(ws, compress, self.heartbeat_interval / 1000.0)
        self._conns.add(conn)
        conn.writer = asyncio.create_task(self._conn_writer(conn))
        conn.send_op(10, {"heartbeat_interval": self.heartbeat_interval, "_trace": ["fakediscord"]})
        try:
            async for msg in ws:
                if msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                    try:
                        data = json.loads(msg.data)
                    except Exception:
                        await self._close_conn(conn, 4002)
                        break
                    await self._on_gateway_op(conn, data)
                else:
                    break
        finally:
            conn.closed = True
            self._conns.discard(conn)
            if conn.session is not None and conn.session.conn is conn:
                conn.session.conn = None
                conn.session.disconnected_at = time.monotonic()
                log.debug("gateway connection closed with %s", ws.close_code)
                if ws.close_code in (1000, 1001) and not conn.server_closed:
                    # a clean close by the client ends the session (Discord cannot resume it)
                    conn.session.invalidated = True
            if conn.writer is not None:
                conn.writer.cancel()
        return ws

    async def _conn_writer(self, conn: _Conn) -> None:
        try:
            while True:
                item = await conn.queue.get()
                if callable(item):
                    item()
                    continue
                if conn.ws.closed:
                    return
                try:
                    if conn.zctx is not None:
                        data = conn.zctx.compress(item.encode("utf-8")) + conn.zctx.flush(zlib.Z_SYNC_FLUSH)
                        await conn.ws.send_bytes(data)
                    else:
                        await conn.ws.send_str(item)
                except (ConnectionError, RuntimeError):
                    return
        except asyncio.CancelledError:
            pass

    async def _close_conn(self, conn: _Conn, code: int) -> None:
        conn.closed = True
        conn.server_closed = True
        if conn.session is not None and conn.session.conn is conn:
            conn.session.conn = None
            conn.session.disconnected_at = time.monotonic()
        with contextlib.suppress(Exception):
            await conn.ws.close(code=code, message=b"closed by fakediscord")
        if conn.writer is not None:
            conn.writer.cancel()
        self._conns.discard(conn)

    def _check_heartbeat_gaps(self) -> None:
        now = time.monotonic()
        for conn in list(self._conns):
            if conn.closed or conn.gap_flagged:
                continue
            gap = now - conn.last_heartbeat
            if gap > 1.5 * conn.interval:
                conn.gap_flagged = True
                self.violation(f"heartbeat gap: {gap:.2f}s without a heartbeat (interval {conn.interval:.2f}s) "
                               f"- is the event loop blocked?")

    async def _heartbeat_watchdog(self) -> None:
        while True:
            await asyncio.sleep(min(0.25, self.heartbeat_interval / 4000.0))
            self._check_heartbeat_gaps()

    async def _on_gateway_op(self, conn: _Conn, msg: Dict[str, Any]) -> None:
        op = msg.get("op")
        d = msg.get("d")
        if op == 1:
            now = time.monotonic()
            gap = now - conn.last_heartbeat
            if gap > 1.5 * conn.interval and not conn.gap_flagged:
                self.violation(f"heartbeat gap: {gap:.2f}s between heartbeats (interval {conn.interval:.2f}s) "
                               f"- is the event loop blocked?")
            conn.last_heartbeat = now
            conn.gap_flagged = False
            conn.heartbeats += 1
            self.heartbeats += 1
            conn.send_op(11, None)
        elif op == 2:
            if not isinstance(d, dict) or d.get("token") != self.token:
                await self._close_conn(conn, 4004)
                return
            if conn.session is not None:
                await self._close_conn(conn, 4005)
                return
            shard = d.get("shard")
            if shard is not None and not (isinstance(shard, list) and len(shard) == 2
                                          and all(isinstance(x, int) for x in shard) and 0 <= shard[0] < shard[1]):
                await self._close_conn(conn, 4010)  # Invalid shard
                return
            self.identify_count += 1
            self.identified_shards.append(shard)
            self.intents = int(d.get("intents") or 0)
            s = _Session(uuid.uuid4().hex, self.intents, shard)
            self._sessions[s.id] = s
            s.conn = conn
            conn.session = s
            guilds = [g for g in self.guilds.values() if self.bot_user.id in g.members and self._session_gets(s, g.id)]
            ready = {
                "v": 10,
                "user": {**self.bot_user.payload(), "verified": True, "mfa_enabled": False, "email": None,
                         "locale": "en-US"},
                "user_settings": {},
                "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
                "session_id": s.id,
                "session_type": "normal",
                "resume_gateway_url": self.gateway_url,
                "shard": d.get("shard") or [0, 1],
                "application": {"id": str(self.application_id), "flags": 0},
                "private_channels": [],
                "relationships": [],
                "presences": [],
                "guild_join_requests": [],
                "geo_ordered_rtc_regions": ["fake"],
                "auth": {},
                "_trace": ["fakediscord"],
            }
            s.send_dispatch("READY", ready)
            for g in guilds:
                s.send_dispatch("GUILD_CREATE", self._guild_payload(g, s))

            def mark_ready(s: _Session = s) -> None:
                s.ready = True
                if self._ready_event is not None:
                    self._ready_event.set()

            conn.queue.put_nowait(mark_ready)
        elif op == 6:
            if not isinstance(d, dict) or d.get("token") != self.token:
                await self._close_conn(conn, 4004)
                return
            resumed = self._sessions.get(str(d.get("session_id")))
            if resumed is None or resumed.invalidated:
                conn.send_op(9, False)
                return
            s = resumed
            if s.conn is not None and s.conn is not conn:
                await self._close_conn(s.conn, 4000)
            s.conn = conn
            s.disconnected_at = None
            conn.session = s
            last = int(d.get("seq") or 0)
            for seq, text in list(s.buffer):
                if seq > last:
                    conn.queue.put_nowait(text)
            self.resume_count += 1
            s.send_dispatch("RESUMED", {"_trace": ["fakediscord"]})
            s.ready = True
        elif op == 8:
            if conn.session is None:
                return
            s = conn.session
            if not isinstance(d, dict) or d.get("guild_id") is None:
                self.violation(f"Request Guild Members (op 8) without a guild_id: {d!r}")
                return
            gid = int(d["guild_id"])
            guild = self.guilds.get(gid)
            members = list(guild.members.values()) if guild else []
            if d.get("user_ids"):
                ids = {int(x) for x in (d["user_ids"] if isinstance(d["user_ids"], list) else [d["user_ids"]])}
                members = [m for m in members if m.user.id in ids]
            elif d.get("query"):
                members = [m for m in members if m.user.name.lower().startswith(d["query"].lower())]
            chunk = {"guild_id": str(gid), "members": [m.payload() for m in members], "chunk_index": 0,
                     "chunk_count": 1, "not_found": []}
            if d.get("nonce") is not None:
                chunk["nonce"] = d["nonce"]
            s.send_dispatch("GUILD_MEMBERS_CHUNK", chunk)
        elif op in (3, 4, 31, 36, 37):
            pass
        else:
            self.violation(f"unknown gateway opcode {op}")

    # ------------------------------------------------------------------ REST plumbing
    def _build_routes(self) -> List[Tuple[str, "re.Pattern[str]", Callable, bool]]:
        S = r"(\d+)"
        T = r"([^/]+)"
        r: List[Tuple[str, str, Callable, bool]] = [
            # (method, pattern, handler, needs bot auth)
            ("GET", r"/gateway", self._r_gateway, False),
            ("GET", r"/gateway/bot", self._r_gateway_bot, True),
            ("GET", r"/users/@me", self._r_me, True),
            ("PATCH", r"/users/@me", self._r_me, True),
            ("GET", r"/users/@me/guilds", self._r_my_guilds, True),
            ("DELETE", rf"/users/@me/guilds/{S}", self._r_noop204, True),
            ("POST", r"/users/@me/channels", self._r_create_dm, True),
            ("GET", rf"/users/{S}", self._r_user, True),
            ("GET", r"/oauth2/applications/@me", self._r_app_info, True),
            ("GET", r"/applications/@me", self._r_app_info, True),
            ("PATCH", r"/applications/@me", self._r_app_info, True),
            ("GET", rf"/applications/{S}/commands", self._r_get_commands, True),
            ("PUT", rf"/applications/{S}/commands", self._r_put_commands, True),
            ("POST", rf"/applications/{S}/commands", self._r_post_command, True),
            ("GET", rf"/applications/{S}/commands/{S}", self._r_get_command, True),
            ("PATCH", rf"/applications/{S}/commands/{S}", self._r_patch_command, True),
            ("DELETE", rf"/applications/{S}/commands/{S}", self._r_delete_command, True),
            ("GET", rf"/applications/{S}/guilds/{S}/commands", self._r_get_commands, True),
            ("PUT", rf"/applications/{S}/guilds/{S}/commands", self._r_put_commands, True),
            ("POST", rf"/applications/{S}/guilds/{S}/commands", self._r_post_command, True),
            ("GET", rf"/applications/{S}/guilds/{S}/commands/permissions", self._r_empty_list, True),
            ("GET", rf"/applications/{S}/guilds/{S}/commands/{S}", self._r_get_command, True),
            ("PATCH", rf"/applications/{S}/guilds/{S}/commands/{S}", self._r_patch_command, True),
            ("DELETE", rf"/applications/{S}/guilds/{S}/commands/{S}", self._r_delete_command, True),
            ("GET", rf"/applications/{S}/emojis", self._r_app_emojis, True),
            ("POST", rf"/applications/{S}/emojis", self._r_app_emoji_create, True),
            ("GET", rf"/applications/{S}/emojis/{S}", self._r_app_emoji, True),
            ("PATCH", rf"/applications/{S}/emojis/{S}", self._r_app_emoji, True),
            ("DELETE", rf"/applications/{S}/emojis/{S}", self._r_app_emoji, True),
            ("GET", rf"/applications/{S}/entitlements", self._r_empty_list, True),
            ("GET", rf"/applications/{S}/skus", self._r_empty_list, True),
            ("GET", rf"/channels/{S}", self._r_get_channel, True),
            ("PATCH", rf"/channels/{S}", self._r_patch_channel, True),
            ("DELETE", rf"/channels/{S}", self._r_delete_channel, True),
            ("GET", rf"/channels/{S}/messages", self._r_list_messages, True),
            ("POST", rf"/channels/{S}/messages", self._r_create_message, True),
            ("POST", rf"/channels/{S}/messages/bulk-delete", self._r_bulk_delete, True),
            ("GET", rf"/channels/{S}/messages/pins", self._r_pins, True),
            ("PUT", rf"/channels/{S}/messages/pins/{S}", self._r_pin, True),
            ("DELETE", rf"/channels/{S}/messages/pins/{S}", self._r_pin, True),
            ("GET", rf"/channels/{S}/messages/{S}", self._r_get_message, True),
            ("PATCH", rf"/channels/{S}/messages/{S}", self._r_edit_message, True),
            ("DELETE", rf"/channels/{S}/messages/{S}", self._r_delete_message, True),
            ("PUT", rf"/channels/{S}/messages/{S}/reactions/{T}/@me", self._r_react, True),
            ("DELETE", rf"/channels/{S}/messages/{S}/reactions/{T}/@me", self._r_react, True),
            ("DELETE", rf"/channels/{S}/messages/{S}/reactions/{T}/{S}", self._r_noop204, True),
            ("DELETE", rf"/channels/{S}/messages/{S}/reactions/{T}", self._r_noop204, True),
            ("DELETE", rf"/channels/{S}/messages/{S}/reactions", self._r_noop204, True),
            ("GET", rf"/channels/{S}/messages/{S}/reactions/{T}", self._r_empty_list, True),
            ("POST", rf"/channels/{S}/messages/{S}/threads", self._r_thread_from_message, True),
            ("POST", rf"/channels/{S}/threads", self._r_thread_create, True),
            ("GET", rf"/channels/{S}/threads/archived/public", self._r_archived_threads, True),
            ("GET", rf"/channels/{S}/threads/archived/private", self._r_archived_threads, True),
            ("GET", rf"/channels/{S}/users/@me/threads/archived/private", self._r_archived_threads, True),
            ("PUT", rf"/channels/{S}/thread-members/{T}", self._r_thread_member, True),
            ("DELETE", rf"/channels/{S}/thread-members/{T}", self._r_thread_member, True),
            ("GET", rf"/channels/{S}/thread-members/{T}", self._r_thread_member, True),
            ("GET", rf"/channels/{S}/thread-members", self._r_thread_members, True),
            ("POST", rf"/channels/{S}/typing", self._r_noop204, True),
            ("GET", rf"/channels/{S}/pins", self._r_pins, True),
            ("PUT", rf"/channels/{S}/pins/{S}", self._r_pin, True),
            ("DELETE", rf"/channels/{S}/pins/{S}", self._r_pin, True),
            ("PUT", rf"/channels/{S}/permissions/{S}", self._r_put_overwrite, True),
            ("DELETE", rf"/channels/{S}/permissions/{S}", self._r_noop204, True),
            ("GET", rf"/guilds/{S}", self._r_get_guild, True),
            ("GET", rf"/guilds/{S}/channels", self._r_guild_channels, True),
            ("POST", rf"/guilds/{S}/channels", self._r_guild_create_channel, True),
            ("GET", rf"/guilds/{S}/roles", self._r_guild_roles, True),
            ("GET", rf"/guilds/{S}/members", self._r_guild_members, True),
            ("GET", rf"/guilds/{S}/members/search", self._r_guild_members, True),
            ("GET", rf"/guilds/{S}/members/{S}", self._r_guild_member, True),
            ("PATCH", rf"/guilds/{S}/members/@me", self._r_guild_member_me, True),
            ("PUT", rf"/guilds/{S}/members/{S}/roles/{S}", self._r_member_role, True),
            ("DELETE", rf"/guilds/{S}/members/{S}/roles/{S}", self._r_member_role, True),
            ("GET", rf"/guilds/{S}/threads/active", self._r_active_threads, True),
            ("GET", rf"/guilds/{S}/scheduled-events", self._r_list_events, True),
            ("POST", rf"/guilds/{S}/scheduled-events", self._r_create_event, True),
            ("GET", rf"/guilds/{S}/scheduled-events/{S}", self._r_get_event, True),
            ("PATCH", rf"/guilds/{S}/scheduled-events/{S}", self._r_edit_event, True),
            ("DELETE", rf"/guilds/{S}/scheduled-events/{S}", self._r_delete_event, True),
            ("GET", rf"/guilds/{S}/scheduled-events/{S}/users", self._r_event_users, True),
            ("POST", rf"/interactions/{S}/{T}/callback", self._r_interaction_callback, False),
            ("POST", rf"/webhooks/{S}/{T}", self._r_webhook_execute, False),
            ("GET", rf"/webhooks/{S}/{T}/messages/{T}", self._r_webhook_get, False),
            ("PATCH", rf"/webhooks/{S}/{T}/messages/{T}", self._r_webhook_edit, False),
            ("DELETE", rf"/webhooks/{S}/{T}/messages/{T}", self._r_webhook_delete, False),
        ]
        return [(m, re.compile(p), h, a) for m, p, h, a in r]

    async def _read_body(self, request: web.Request) -> Tuple[Any, List[Dict[str, Any]]]:
        # The header is split by hand, not through aiohttp's ``content_type`` and ``multipart()``:
        # those parse with the email package and were a quarter of the stand-in's CPU in the
        # load benchmark (bench/load.py), where the stand-in shares the cores with the bot.
        ctype, params = _header_params(request.headers.get("Content-Type", ""))
        files: List[Dict[str, Any]] = []
        if ctype.startswith("multipart/"):
            payload: Any = {}
            for headers, data in _multipart(await request.read(), params.get("boundary", "")):
                _, names = _header_params(headers.get("content-disposition", ""))
                name = names.get("name", "")
                if name == "payload_json":
                    payload = json.loads(data)
                elif name.startswith("files[") or name.startswith("file"):
                    idx = int(name[6:-1]) if name.startswith("files[") else len(files)
                    files.append({"index": idx, "filename": names.get("filename") or f"file{idx}",
                                  "data": data, "content_type": headers.get("content-type")})
            return payload, files
        raw = await request.read()
        if not raw:
            return None, files
        if ctype != "application/json":
            self.violation(f"request body with Content-Type {ctype or 'application/octet-stream'!r} "
                           f"on {request.method} {request.path}")
        return json.loads(raw), files

    async def _attachment_handler(self, request: web.Request) -> web.Response:
        a = self._attachments.get(int(request.match_info["aid"]))
        if a is None:
            return web.Response(status=404, text="not found")
        return web.Response(body=a["data"], content_type=a.get("content_type") or "application/octet-stream")

    async def _rest_handler(self, request: web.Request) -> web.StreamResponse:
        t0 = time.time()
        method = request.method
        path = request.path
        rel = path[len(API_PREFIX):] if path.startswith(API_PREFIX + "/") else None
        resp: Optional[web.StreamResponse] = None
        dropped = False
        try:
            resp = await self._handle_rest(request, method, rel, path)
        except _Drop:
            # an injected dropped connection: no response at all
            dropped = True
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError()
        except ApiError as e:
            if e.violation:
                self.violation(e.violation)
            body: Dict[str, Any] = {"message": e.message, "code": e.code}
            if e.errors is not None:
                body["errors"] = e.errors
            if e.body is not None:
                body = e.body
            resp = _json_response(body, e.status, e.headers)
        except ConnectionResetError as e:
            if request.transport is not None and not request.transport.is_closing():
                log.exception("fakediscord internal error on %s %s", method, path)
                self.violation(f"stand-in internal error on {method} {path}: {e!r}")
                resp = _json_response({"message": f"stand-in error: {e!r}", "code": 0}, 400)
            else:
                # The client went away in the middle of its request (a killed bot sending a
                # picture): nobody is left to answer, and it is no fault of the stand-in.
                log.info("client gone during %s %s", method, path)
                dropped = True
                raise asyncio.CancelledError()
        except Exception as e:  # a bug in the stand-in: make it visible
            log.exception("fakediscord internal error on %s %s", method, path)
            self.violation(f"stand-in internal error on {method} {path}: {e!r}")
            resp = _json_response({"message": f"stand-in error: {e!r}", "code": 0}, 400)
        finally:
            status = 0 if dropped else (resp.status if resp else 500)
            self.requests.append(RequestLog(method, rel if rel is not None else path, status, t0))
        return resp

    async def _handle_rest(self, request: web.Request, method: str, rel: Optional[str], path: str) -> web.StreamResponse:
        if rel is None:
            raise ApiError(404, 0, "404: Not Found", violation=f"unknown route: {method} {path} (not under {API_PREFIX})")
        for m, pattern, handler, needs_auth in self._routes:
            if m != method:
                continue
            mt = pattern.fullmatch(rel)
            if mt is None:
                continue
            if needs_auth and request.headers.get("Authorization") != f"Bot {self.token}":
                raise ApiError(401, 0, "401: Unauthorized")
            for held in [h for h in self._holds if h.matches(method, rel)]:
                await held.wait(rel)
            if needs_auth and self.global_rate is not None:
                self._global_limit()
            self._maybe_fail(method, rel)
            body, files = await self._read_body(request)
            response = await handler(request, *mt.groups(), body=body, files=files)
            self._maybe_fail(method, rel, after=True)
            return response
        raise ApiError(404, 0, "404: Not Found", violation=f"unknown route: {method} {rel}")

    def _global_limit(self) -> None:
        """Discord's global rate limit of a bot token: a 429 with ``global: true`` past it."""
        assert self.global_rate is not None  # (called only with a global limit set)
        limit, per = self.global_rate
        now = time.time()
        b = self._global_bucket
        if now >= b[0] + per:
            b[0], b[1] = now, 0
        if b[1] >= limit:
            retry = max(0.001, b[0] + per - now)
            headers = {"Via": "1.1 google", "Retry-After": str(max(1, int(retry + 0.999))),
                       "X-RateLimit-Global": "true", "X-RateLimit-Scope": "global"}
            raise _Raw429({"message": "You are being rate limited.", "retry_after": round(retry, 3),
                           "global": True}, headers)
        b[1] += 1

    def _notify(self, m: Message, kind: str) -> None:
        for listener in self.message_listeners:
            try:
                listener(m, kind)
            except Exception:  # a broken listener must not break the stand-in
                log.exception("message listener failed")

    def _message_of(self, rel: str) -> Optional[int]:
        """The message a REST path acts on: named by its id, or ``@original`` of an interaction's token."""
        found = re.search(r"/messages/(\d+|@original)(?:/|$)", rel)
        if found is None:
            return None
        if found.group(1) != "@original":
            return int(found.group(1))
        token = re.search(r"/webhooks/\d+/([^/]+)/messages/@original", rel)
        rec = self._by_token.get(token.group(1)) if token else None
        return rec.original.id if rec is not None and rec.original is not None else None

    def _maybe_fail(self, method: str, rel: str, *, after: bool = False) -> None:
        for f in list(self._failures):
            if f["method"] not in ("*", method) or not f["regex"].search(rel) or f["after"] != after:
                continue
            if f["message"] is not None and self._message_of(rel) != f["message"]:
                continue
            f["times"] -= 1
            if f["times"] <= 0:
                self._failures.remove(f)
            status = f["status"]
            if status == 0:
                raise _Drop()
            headers: Dict[str, str] = {}
            body = f["json"]
            if status == 429:
                ra = f["retry_after"]
                headers = {"Via": "1.1 google", "Retry-After": str(max(1, int(ra + 0.999))),
                           "X-RateLimit-Scope": "user", "X-RateLimit-Global": "false"}
                if body is None:
                    body = {"message": "You are being rate limited.", "retry_after": ra, "global": False}
            if body is None:
                body = {500: {"message": "500: Internal Server Error", "code": 0},
                        502: {"message": "502: Bad Gateway", "code": 0},
                        503: {"message": "503: Service Unavailable", "code": 0},
                        404: {"message": "Unknown Message", "code": 10008},
                        403: {"message": "Missing Permissions", "code": 50013}}.get(status, {"message": "injected", "code": 0})
            if status == 429:
                raise _Raw429(body, headers)
            err = ApiError(status, body.get("code", 0) if isinstance(body, dict) else 0,
                           body.get("message", "") if isinstance(body, dict) else str(body), headers=headers)
            err.body = body
            raise err
        return None

    # ------------------------------------------------------------------ simple routes
    async def _r_noop204(self, request: web.Request, *a: Any, body: Any, files: Any) -> web.Response:
        return _empty()

    async def _r_empty_list(self, request: web.Request, *a: Any, body: Any, files: Any) -> web.Response:
        return _json_response([])

    async def _r_gateway(self, request: web.Request, *a: Any, body: Any, files: Any) -> web.Response:
        return _json_response({"url": self.gateway_url.rstrip("/")})

    async def _r_gateway_bot(self, request: web.Request, *a: Any, body: Any, files: Any) -> web.Response:
        return _json_response({"url": self.gateway_url.rstrip("/"), "shards": self.shard_count,
                               "session_start_limit": {"total": 1000, "remaining": 1000 - self.identify_count,
                                                       "reset_after": 14400000,
                                                       "max_concurrency": self.max_concurrency}})

    async def _r_me(self, request: web.Request, *a: Any, body: Any, files: Any) -> web.Response:
        return _json_response({**self.bot_user.payload(), "verified": True, "mfa_enabled": False, "email": None,
                               "locale": "en-US"})

    async def _r_user(self, request: web.Request, uid: str, *, body: Any, files: Any) -> web.Response:
        u = self.users.get(int(uid))
        if u is None:
            raise ApiError(404, 10013, "Unknown User")
        return _json_response(u.payload())

    async def _r_my_guilds(self, request: web.Request, *a: Any, body: Any, files: Any) -> web.Response:
        return _json_response([{"id": str(g.id), "name": g.name, "icon": None, "owner": False,
                                "permissions": str(self.base_permissions(g, self.bot_user)), "features": []}
                               for g in self.guilds.values() if self.bot_user.id in g.members])

    async def _r_app_info(self, request: web.Request, *a: Any, body: Any, files: Any) -> web.Response:
        return _json_response({
            "id": str(self.application_id), "name": self.bot_user.name, "icon": None, "description": "",
            "rpc_origins": [], "bot_public": True, "bot_require_code_grant": False,
            "bot": self.bot_user.payload(), "owner": self.owner.payload(), "team": None, "summary": "",
            "verify_key": "00" * 32, "flags": 0, "tags": [], "approximate_guild_count": len(self.guilds),
            "redirect_uris": [], "interactions_endpoint_url": None, "integration_types_config": {"0": {}, "1": {}},
        })

    async def _r_app_emojis(self, request: web.Request, app_id: str, *, body: Any, files: Any) -> web.Response:
        self._check_app(app_id)
        return _json_response({"items": list(self.app_emojis.values())})

    async def _r_app_emoji_create(self, request: web.Request, app_id: str, *, body: Any, files: Any) -> web.Response:
        self._check_app(app_id)
        name = (body or {}).get("name") or ""
        if not re.fullmatch(r"\w{2,32}", name):
            raise ApiError(400, 50035, "Invalid Form Body", violation=f"application emoji name {name!r} must be 2-32 word characters")
        if any(e["name"] == name for e in self.app_emojis.values()):
            raise ApiError(400, 50035, "Invalid Form Body", violation=f"application emoji {name!r} already exists")
        if len(self.app_emojis) >= 2000:
            raise ApiError(400, 30056, "Maximum number of application emojis reached (2000)",
                           violation="more than 2000 application emojis")
        image = (body or {}).get("image") or ""
        if not image.startswith("data:image/"):
            raise ApiError(400, 50035, "Invalid Form Body", violation=f"application emoji {name!r}: image is not a data URI")
        eid = self._next_id()
        e: Dict[str, Any] = {"id": str(eid), "name": name, "roles": [], "user": self.owner.payload(), "require_colons": True,
             "managed": False, "animated": image.startswith("data:image/gif"), "available": True}
        self.app_emojis[eid] = e
        return _json_response(e, 201)

    async def _r_app_emoji(self, request: web.Request, app_id: str, eid: str, *, body: Any, files: Any) -> web.Response:
        self._check_app(app_id)
        e = self.app_emojis.get(int(eid))
        if e is None:
            raise ApiError(404, 10014, "Unknown Emoji")
        if request.method == "DELETE":
            del self.app_emojis[int(eid)]
            return _empty()
        if request.method == "PATCH" and body and body.get("name"):
            e["name"] = body["name"]
        return _json_response(e)

    async def _r_create_dm(self, request: web.Request, *a: Any, body: Any, files: Any) -> web.Response:
        uid = int(body["recipient_id"])
        user = self.users.get(uid)
        if user is None:
            raise ApiError(400, 50035, "Invalid Form Body")
        return _json_response(self.dm_channel(user).payload())

    def dm_channel(self, user: User) -> Channel:
        """The DM channel between ``user`` and the bot (made on first use, as Discord does)."""
        ch = self._dm_channels.get(user.id)
        if ch is None:
            ch = Channel(id=self._next_id(), type=1, name=f"dm-{user.name}", recipient=user)
            self._dm_channels[user.id] = ch
            self.channels[ch.id] = ch
            self._channel_messages[ch.id] = []
        return ch

    # ------------------------------------------------------------------ commands
    def _check_app(self, app_id: str) -> None:
        if int(app_id) != self.application_id:
            raise ApiError(403, 50001, "Missing Access")

    def _cmd_list(self, guild_id: Optional[str]) -> List[Dict[str, Any]]:
        if guild_id is None:
            return self._global_commands
        g = self.guilds.get(int(guild_id))
        if g is None:
            raise ApiError(404, 10004, "Unknown Guild")
        return self._guild_commands.setdefault(g.id, [])

    def _validate_command(self, c: Dict[str, Any]) -> List[str]:
        problems: List[str] = []
        ctype = c.get("type", 1)
        name = c.get("name") or ""
        where = f"command {name!r}"
        if ctype == 1:
            if not re.fullmatch(r"[-_\w]{1,32}", name) or name != name.lower():
                problems.append(f"{where}: invalid slash command name")
            if not 1 <= len(c.get("description") or "") <= 100:
                problems.append(f"{where}: description must be 1-100 chars")
        elif not 1 <= len(name) <= 32:
            problems.append(f"{where}: name must be 1-32 chars")

        def opts(options: List[Dict[str, Any]], w: str, depth: int) -> None:
            if len(options) > 25:
                problems.append(f"{w}: more than 25 options")
            seen_optional = False
            names = set()
            for o in options:
                n = o.get("name") or ""
                ow = f"{w} option {n!r}"
                if n in names:
                    problems.append(f"{ow}: duplicate option name")
                names.add(n)
                if not re.fullmatch(r"[-_\w]{1,32}", n) or n != n.lower():
                    problems.append(f"{ow}: invalid option name")
                if not 1 <= len(o.get("description") or "") <= 100:
                    problems.append(f"{ow}: description must be 1-100 chars")
                t = o.get("type")
                if t in (1, 2):
                    if depth >= 2 or (t == 2 and depth >= 1):
                        problems.append(f"{ow}: subcommand nesting too deep")
                    opts(o.get("options") or [], ow, depth + 1)
                    continue
                if o.get("required"):
                    if seen_optional:
                        problems.append(f"{ow}: required option after optional ones")
                else:
                    seen_optional = True
                if t in (4, 10):  # INTEGER / NUMBER: bounds within Discord's +-2**53
                    for bound in ("min_value", "max_value"):
                        v = o.get(bound)
                        if v is not None and not -(2 ** 53) <= v <= 2 ** 53:
                            problems.append(f"{ow}: {bound} {v} outside -2**53..2**53")
                ch = o.get("choices") or []
                if len(ch) > 25:
                    problems.append(f"{ow}: more than 25 choices ({len(ch)})")
                for x in ch:
                    if not 1 <= len(str(x.get("name", ""))) <= 100:
                        problems.append(f"{ow}: choice name must be 1-100 chars")
                if ch and o.get("autocomplete"):
                    problems.append(f"{ow}: choices and autocomplete are exclusive")

        opts(c.get("options") or [], where, 0)
        return problems

    def _store_commands(self, lst: List[Dict[str, Any]], new: List[Dict[str, Any]], guild_id: Optional[str]) -> List[Dict[str, Any]]:
        problems: List[str] = []
        for c in new:
            problems += self._validate_command(c)
        n_slash = sum(1 for c in new if c.get("type", 1) == 1)
        if n_slash > 100:
            problems.append(f"more than 100 slash commands ({n_slash})")
        if problems:
            for p in problems:
                self.violation(f"command registration: {p}")
            raise ApiError(400, 50035, "Invalid Form Body", errors={"_errors": [{"message": p} for p in problems]})
        old = {(c["name"], c.get("type", 1)): c for c in lst}
        out = []
        for c in new:
            prev = old.get((c["name"], c.get("type", 1)))
            out.append(self._command_record(c, guild_id, prev["id"] if prev else None))
        lst[:] = out
        return out

    def _command_record(self, c: Dict[str, Any], guild_id: Optional[str], cid: Optional[str] = None) -> Dict[str, Any]:
        rec = {
            "type": 1,
            "description": "",
            "default_member_permissions": None,
            "nsfw": False,
            **c,
            "id": cid or str(self._next_id()),
            "application_id": str(self.application_id),
            "version": str(self._next_id()),
        }
        if guild_id is not None:
            rec["guild_id"] = str(guild_id)
        rec.setdefault("options", [])
        return rec

    async def _r_get_commands(self, request: web.Request, app_id: str, guild_id: Optional[str] = None, *, body: Any,
                              files: Any) -> web.Response:
        self._check_app(app_id)
        return _json_response(self._cmd_list(guild_id))

    async def _r_put_commands(self, request: web.Request, app_id: str, guild_id: Optional[str] = None, *, body: Any,
                              files: Any) -> web.Response:
        self._check_app(app_id)
        out = self._store_commands(self._cmd_list(guild_id), list(body or []), guild_id)
        if self._commands_event is not None:
            self._commands_event.set()
        return _json_response(out)

    async def _r_post_command(self, request: web.Request, app_id: str, guild_id: Optional[str] = None, *, body: Any,
                              files: Any) -> web.Response:
        self._check_app(app_id)
        lst = self._cmd_list(guild_id)
        problems = self._validate_command(body)
        if problems:
            for p in problems:
                self.violation(f"command registration: {p}")
            raise ApiError(400, 50035, "Invalid Form Body")
        prev = next((c for c in lst if c["name"] == body["name"] and c.get("type", 1) == body.get("type", 1)), None)
        rec = self._command_record(body, guild_id, prev["id"] if prev else None)
        if prev:
            lst[lst.index(prev)] = rec
        else:
            lst.append(rec)
        if self._commands_event is not None:
            self._commands_event.set()
        return _json_response(rec, 200 if prev else 201)

    def _find_command_by_id(self, guild_id: Optional[str], cid: str) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
        lst = self._cmd_list(guild_id)
        for c in lst:
            if c["id"] == str(cid):
                return lst, c
        raise ApiError(404, 10063, "Unknown application command")

    async def _r_get_command(self, request: web.Request, app_id: str, *ids: str, body: Any, files: Any) -> web.Response:
        guild_id, cid = (ids[0], ids[1]) if len(ids) == 2 else (None, ids[0])
        _, c = self._find_command_by_id(guild_id, cid)
        return _json_response(c)

    async def _r_patch_command(self, request: web.Request, app_id: str, *ids: str, body: Any, files: Any) -> web.Response:
        guild_id, cid = (ids[0], ids[1]) if len(ids) == 2 else (None, ids[0])
        lst, c = self._find_command_by_id(guild_id, cid)
        c.update(body or {})
        return _json_response(c)

    async def _r_delete_command(self, request: web.Request, app_id: str, *ids: str, body: Any, files: Any) -> web.Response:
        guild_id, cid = (ids[0], ids[1]) if len(ids) == 2 else (None, ids[0])
        lst, c = self._find_command_by_id(guild_id, cid)
        lst.remove(c)
        return _empty()

    # ------------------------------------------------------------------ guild routes
    def _guild(self, gid: str) -> Guild:
        g = self.guilds.get(int(gid))
        if g is None or self.bot_user.id not in g.members:
            raise ApiError(404, 10004, "Unknown Guild")
        return g

    async def _r_get_guild(self, request: web.Request, gid: str, *, body: Any, files: Any) -> web.Response:
        g = self._guild(gid)
        p = self._guild_payload(g, None)
        for k in ("members", "channels", "threads", "voice_states", "presences", "joined_at", "large", "member_count"):
            p.pop(k, None)
        p["approximate_member_count"] = len(g.members)
        return _json_response(p)

    async def _r_guild_channels(self, request: web.Request, gid: str, *, body: Any, files: Any) -> web.Response:
        g = self._guild(gid)
        return _json_response([c.payload() for c in g.channels.values() if not c.is_thread and not c.deleted])

    async def _r_guild_create_channel(self, request: web.Request, gid: str, *, body: Any, files: Any) -> web.Response:
        g = self._guild(gid)
        ch = self.add_channel(g, body.get("name", "channel"), type=int(body.get("type", 0)), topic=body.get("topic"))
        return _json_response(ch.payload(), 201)

    async def _r_guild_roles(self, request: web.Request, gid: str, *, body: Any, files: Any) -> web.Response:
        return _json_response([r.payload() for r in self._guild(gid).roles.values()])

    async def _r_guild_members(self, request: web.Request, gid: str, *, body: Any, files: Any) -> web.Response:
        g = self._guild(gid)
        ms = sorted(g.members.values(), key=lambda m: m.user.id)
        q = request.query.get("query")
        if q:
            ms = [m for m in ms if m.user.name.lower().startswith(q.lower())]
        after = int(request.query.get("after", 0))
        ms = [m for m in ms if m.user.id > after][: int(request.query.get("limit", 1))]
        return _json_response([m.payload() for m in ms])

    async def _r_guild_member(self, request: web.Request, gid: str, uid: str, *, body: Any, files: Any) -> web.Response:
        g = self._guild(gid)
        m = g.members.get(int(uid))
        if m is None:
            raise ApiError(404, 10007, "Unknown Member")
        return _json_response(m.payload())

    async def _r_guild_member_me(self, request: web.Request, gid: str, *, body: Any, files: Any) -> web.Response:
        g = self._guild(gid)
        m = g.members[self.bot_user.id]
        if body and "nick" in body:
            m.nick = body["nick"]
        return _json_response(m.payload())

    def top_role_position(self, guild: Guild, user: User) -> int:
        """The position of ``user``'s highest role (0: only @everyone)."""
        m = guild.members.get(user.id)
        return max((guild.roles[r].position for r in (m.roles if m else []) if r in guild.roles), default=0)

    async def _r_member_role(self, request: web.Request, gid: str, uid: str, rid: str, *, body: Any,
                             files: Any) -> web.Response:
        """Add (PUT) or remove (DELETE) a member's role, as Discord checks it: Manage Roles
        (50013), a role strictly below the bot's highest role and not managed by an
        integration (50013), an existing role (10011) and member (10007); 204, and
        GUILD_MEMBER_UPDATE to bots with the members intent."""
        g = self._guild(gid)
        role = g.roles.get(int(rid))
        if role is None:
            raise ApiError(404, 10011, "Unknown Role")
        m = g.members.get(int(uid))
        if m is None:
            raise ApiError(404, 10007, "Unknown Member")
        if not self.base_permissions(g, self.bot_user) & P(manage_roles=True).value:
            raise ApiError(403, 50013, "Missing Permissions (manage roles: manage_roles)")
        if role.managed or role.id == g.id or (g.owner_id != self.bot_user.id
                                               and role.position >= self.top_role_position(g, self.bot_user)):
            raise ApiError(403, 50013, "Missing Permissions (role hierarchy)")
        if request.method == "PUT" and role.id not in m.roles:
            m.roles.append(role.id)
        elif request.method == "DELETE" and role.id in m.roles:
            m.roles.remove(role.id)
        self.role_changes.append((request.method, g.id, m.user.id, role.id))
        self._dispatch("GUILD_MEMBER_UPDATE", {**m.payload(), "guild_id": str(g.id)}, intent=INTENT_GUILD_MEMBERS)
        return _empty()

    async def _r_active_threads(self, request: web.Request, gid: str, *, body: Any, files: Any) -> web.Response:
        g = self._guild(gid)
        ts = [c for c in g.channels.values() if c.is_thread and not c.deleted and not c.archived]
        return _json_response({"threads": [t.payload() for t in ts], "members": []})

    # ------------------------------------------------------------------ guild scheduled events
    def scheduled_events(self, guild: Guild) -> List[Dict[str, Any]]:
        """The server's scheduled events as Discord keeps them (every status), oldest first."""
        return [dict(e) for e in guild.scheduled_events.values()]

    def mark_interested(self, user: User, event: Union[Dict[str, Any], int], interested: bool = True) -> None:
        """``user`` presses *Interested* on an event (or takes it back): GUILD_SCHEDULED_EVENT_USER_ADD
        (or _REMOVE) to bots with the guild scheduled events intent, as Discord sends it."""
        eid = int(event["id"] if isinstance(event, dict) else event)
        guild = next((g for g in self.guilds.values() if eid in g.scheduled_events), None)
        if guild is None:
            raise LookupError(f"no scheduled event {eid}")
        if user.id not in guild.members:
            raise PermissionError(f"{user.name} is not a member of {guild.name}")
        record = guild.scheduled_events[eid]
        if record["status"] not in (EVENT_SCHEDULED, EVENT_ACTIVE):
            raise ValueError("the client offers Interested only on scheduled or active events")
        users = guild.event_users.setdefault(eid, [])
        if interested == (user.id in users):
            return
        if interested:
            users.append(user.id)
        else:
            users.remove(user.id)
        record["user_count"] = len(users)
        self._dispatch("GUILD_SCHEDULED_EVENT_USER_ADD" if interested else "GUILD_SCHEDULED_EVENT_USER_REMOVE",
                       {"guild_scheduled_event_id": str(eid), "user_id": str(user.id), "guild_id": str(guild.id)},
                       intent=INTENT_GUILD_SCHEDULED_EVENTS)

    def _event_of(self, gid: str, eid: str) -> Tuple[Guild, Dict[str, Any]]:
        g = self._guild(gid)
        e = g.scheduled_events.get(int(eid))
        if e is None:
            raise ApiError(404, 10070, "Unknown Guild Scheduled Event")
        return g, e

    def _require_events(self, g: Guild, *, creator_id: Optional[int] = None) -> None:
        """Creating an event needs Create Events or Manage Events in the server; changing one
        needs Manage Events, or Create Events for the bot's own events."""
        have = self.base_permissions(g, self.bot_user)
        if have & MANAGE_EVENTS or (have & CREATE_EVENTS and creator_id in (None, self.bot_user.id)):
            return
        raise ApiError(403, 50013, "Missing Permissions (manage_events)")

    @staticmethod
    def _event_time(value: Any, field_name: str, errors: Dict[str, Any]) -> Optional[_dt.datetime]:
        if not isinstance(value, str):
            errors[field_name] = {"_errors": [{"code": "DATE_TIME_TYPE_INVALID", "message": "Invalid ISO8601 timestamp."}]}
            return None
        try:
            when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            errors[field_name] = {"_errors": [{"code": "DATE_TIME_TYPE_INVALID", "message": "Invalid ISO8601 timestamp."}]}
            return None
        return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)

    def _check_event(self, g: Guild, e: Dict[str, Any], body: Dict[str, Any]) -> None:
        """Discord's validation of an event's fields (the whole event as it would be after the change)."""
        errors: Dict[str, Any] = {}

        def bad(name: str, code: str, message: str) -> None:
            errors[name] = {"_errors": [{"code": code, "message": message}]}

        name = e.get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= 100:
            bad("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
        if e.get("privacy_level") != 2:
            bad("privacy_level", "BASE_TYPE_CHOICES", "Value must be one of {2}.")
        description = e.get("description")
        if description is not None and (not isinstance(description, str) or len(description) > 1000):
            bad("description", "BASE_TYPE_MAX_LENGTH", "Must be 1000 or fewer in length.")
        kind = e.get("entity_type")
        if kind not in (1, 2, 3):
            bad("entity_type", "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3}.")
        start = self._event_time(e.get("scheduled_start_time"), "scheduled_start_time", errors)
        end = None
        if e.get("scheduled_end_time") is not None:
            end = self._event_time(e.get("scheduled_end_time"), "scheduled_end_time", errors)
        now = _dt.datetime.now(_dt.timezone.utc)
        if start is not None and "scheduled_start_time" in body and e["status"] == EVENT_SCHEDULED and start <= now:
            bad("scheduled_start_time", "GUILD_SCHEDULED_EVENT_SCHEDULE_PAST", "Cannot schedule event in the past.")
        if start is not None and end is not None and end <= start:
            bad("scheduled_end_time", "GUILD_SCHEDULED_EVENT_END_BEFORE_START", "Cannot schedule event to end before starting.")
        if kind == 3:
            location = (e.get("entity_metadata") or {}).get("location")
            if e.get("channel_id") is not None:
                bad("channel_id", "GUILD_SCHEDULED_EVENT_EXTERNAL_CHANNEL", "An external event has no channel_id.")
            if not isinstance(location, str) or not 1 <= len(location) <= 100:
                bad("entity_metadata", "BASE_TYPE_REQUIRED", "An external event needs a location (1-100).")
            if e.get("scheduled_end_time") is None:
                bad("scheduled_end_time", "BASE_TYPE_REQUIRED", "An external event needs an end time.")
        elif kind in (1, 2):
            ch = self.channels.get(int(e.get("channel_id") or 0))
            if ch is None or ch.guild_id != g.id or ch.type != (13 if kind == 1 else 2):
                bad("channel_id", "BASE_TYPE_REQUIRED", "A stage or voice event needs its channel.")
            if e.get("entity_metadata"):
                bad("entity_metadata", "BASE_TYPE_BAD_VALUE", "Only external events have entity metadata.")
        if errors:
            raise ApiError(400, 50035, "Invalid Form Body", errors=errors,
                           violation=f"scheduled event refused: {sorted(errors)}")

    async def _r_list_events(self, request: web.Request, gid: str, *, body: Any, files: Any) -> web.Response:
        g = self._guild(gid)
        return _json_response([dict(e) for e in g.scheduled_events.values()])

    async def _r_get_event(self, request: web.Request, gid: str, eid: str, *, body: Any, files: Any) -> web.Response:
        return _json_response(dict(self._event_of(gid, eid)[1]))

    async def _r_create_event(self, request: web.Request, gid: str, *, body: Any, files: Any) -> web.Response:
        g = self._guild(gid)
        self._require_events(g)
        if not isinstance(body, dict):
            raise ApiError(400, 50035, "Invalid Form Body", violation="scheduled event without a JSON body")
        eid = self._next_id()
        e: Dict[str, Any] = {
            "id": str(eid), "guild_id": str(g.id), "channel_id": body.get("channel_id"),
            "creator_id": str(self.bot_user.id), "creator": self.bot_user.payload(), "name": body.get("name"),
            "description": body.get("description"), "scheduled_start_time": body.get("scheduled_start_time"),
            "scheduled_end_time": body.get("scheduled_end_time"), "privacy_level": body.get("privacy_level"),
            "status": EVENT_SCHEDULED, "entity_type": body.get("entity_type"), "entity_id": None,
            "entity_metadata": body.get("entity_metadata"), "user_count": 0, "image": None, "recurrence_rule": None,
        }
        self._check_event(g, e, body)
        g.scheduled_events[eid] = e
        g.event_users[eid] = []
        self._dispatch("GUILD_SCHEDULED_EVENT_CREATE", dict(e), intent=INTENT_GUILD_SCHEDULED_EVENTS)
        return _json_response(dict(e))

    async def _r_edit_event(self, request: web.Request, gid: str, eid: str, *, body: Any, files: Any) -> web.Response:
        g, e = self._event_of(gid, eid)
        self._require_events(g, creator_id=int(e["creator_id"]) if e.get("creator_id") else None)
        if e["status"] in (EVENT_COMPLETED, EVENT_CANCELED):
            raise ApiError(400, 180000, "Cannot update a finished event",
                           violation=f"scheduled event {eid} changed after it finished")
        body = body if isinstance(body, dict) else {}
        after = dict(e)
        for key in ("channel_id", "entity_metadata", "name", "privacy_level", "scheduled_start_time",
                    "scheduled_end_time", "description", "entity_type"):
            if key in body:
                after[key] = body[key]
        if "status" in body:
            status = body["status"]
            if status not in EVENT_TRANSITIONS.get(e["status"], set()):
                raise ApiError(400, 50035, "Invalid Form Body",
                               errors={"status": {"_errors": [{"code": "GUILD_SCHEDULED_EVENT_INVALID_STATUS_TRANSITION",
                                                               "message": "Invalid status transition."}]}},
                               violation=f"scheduled event {eid}: status {e['status']} -> {status} refused")
            after["status"] = status
        self._check_event(g, after, body if after["status"] == EVENT_SCHEDULED else {})
        e.clear()
        e.update(after)
        self._dispatch("GUILD_SCHEDULED_EVENT_UPDATE", dict(e), intent=INTENT_GUILD_SCHEDULED_EVENTS)
        return _json_response(dict(e))

    async def _r_delete_event(self, request: web.Request, gid: str, eid: str, *, body: Any, files: Any) -> web.Response:
        g, e = self._event_of(gid, eid)
        self._require_events(g, creator_id=int(e["creator_id"]) if e.get("creator_id") else None)
        del g.scheduled_events[int(eid)]
        g.event_users.pop(int(eid), None)
        self._dispatch("GUILD_SCHEDULED_EVENT_DELETE", dict(e), intent=INTENT_GUILD_SCHEDULED_EVENTS)
        return _empty()

    async def _r_event_users(self, request: web.Request, gid: str, eid: str, *, body: Any, files: Any) -> web.Response:
        """The event's interested users by id (``before``/``after``, ``limit`` at most 100, ``with_member``)."""
        g, e = self._event_of(gid, eid)
        limit = int(request.query.get("limit", 100))
        if not 1 <= limit <= 100:
            raise ApiError(400, 50035, "Invalid Form Body", violation=f"scheduled event users: limit {limit}")
        ids = sorted(g.event_users.get(int(eid), []))
        if "before" in request.query:
            ids = [u for u in ids if u < int(request.query["before"])][-limit:]
        else:
            ids = [u for u in ids if u > int(request.query.get("after", 0))][:limit]
        with_member = request.query.get("with_member") in ("true", "True", "1")
        out = []
        for uid in ids:
            item: Dict[str, Any] = {"guild_scheduled_event_id": str(eid), "user": self.users[uid].payload()}
            if with_member and uid in g.members:
                item["member"] = g.members[uid].payload(with_user=False)
            out.append(item)
        return _json_response(out)

    # ------------------------------------------------------------------ channel routes
    def _channel(self, cid: str, *, for_send: bool = False, what: str = "") -> Channel:
        ch = self.channels.get(int(cid))
        if ch is None:
            raise ApiError(404, 10003, "Unknown Channel")
        if ch.deleted:
            raise ApiError(404, 10003, "Unknown Channel",
                           violation=f"{what or 'message sent to'} deleted channel #{ch.name}" if for_send else None)
        if ch.guild_id and (self.permissions_in(ch, self.bot_user) & VIEW_CHANNEL) == 0:
            raise ApiError(403, 50001, "Missing Access")
        return ch

    def _msg_in(self, ch: Channel, mid: str, *, route: str) -> Message:
        m = self._messages.get(int(mid))
        if m is None or m.channel_id != ch.id or m.deleted:
            raise ApiError(404, 10008, "Unknown Message")
        if m.ephemeral_to is not None:
            raise ApiError(404, 10008, "Unknown Message",
                           violation=f"ephemeral message {m.id} used through a channel route ({route}); "
                                     f"only its interaction token can reach it")
        return m

    async def _r_get_channel(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        return _json_response(self._channel(cid).payload())

    async def _r_patch_channel(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        body = body or {}
        if ch.is_thread:
            if ch.owner_id != self.bot_user.id:
                self._require(ch, MANAGE_THREADS, "edit thread")
            for k in ("name", "archived", "locked", "auto_archive_duration", "invitable"):
                if k in body:
                    setattr(ch, k, body[k])
            if "archived" in body:
                ch.archive_timestamp = iso()
            self._dispatch("THREAD_UPDATE", ch.payload(), intent=INTENT_GUILDS)
        else:
            self._require(ch, P(manage_channels=True).value, "edit channel")
            for k in ("name", "topic", "position"):
                if k in body:
                    setattr(ch, k, body[k])
            self._dispatch("CHANNEL_UPDATE", ch.payload(), intent=INTENT_GUILDS)
        return _json_response(ch.payload())

    async def _r_delete_channel(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        if ch.is_thread:
            if ch.owner_id != self.bot_user.id:
                self._require(ch, MANAGE_THREADS, "delete thread")
        else:
            self._require(ch, P(manage_channels=True).value, "delete channel")
        p = ch.payload()
        self.delete_channel(ch)
        return _json_response(p)

    async def _r_put_overwrite(self, request: web.Request, cid: str, tid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        self._require(ch, P(manage_roles=True).value, "edit permissions")
        ch.overwrites[int(tid)] = (int(body.get("type", 0)), int(body.get("allow", 0)), int(body.get("deny", 0)))
        self._dispatch("CHANNEL_UPDATE", ch.payload(), intent=INTENT_GUILDS)
        return _empty()

    async def _r_list_messages(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        self._require(ch, READ_HISTORY, "read history")
        msgs = [m for m in self.messages(ch)]
        q = request.query
        limit = max(1, min(100, int(q.get("limit", 50))))
        if "before" in q:
            msgs = [m for m in msgs if m.id < int(q["before"])][-limit:]
        elif "after" in q:
            msgs = [m for m in msgs if m.id > int(q["after"])][:limit]
        elif "around" in q:
            a = int(q["around"])
            older = [m for m in msgs if m.id <= a][-((limit + 1) // 2):]
            newer = [m for m in msgs if m.id > a][: limit // 2]
            msgs = older + newer
        else:
            msgs = msgs[-limit:]
        return _json_response([self._message_payload(m) for m in reversed(msgs)])

    async def _r_get_message(self, request: web.Request, cid: str, mid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        self._require(ch, READ_HISTORY, "read history")
        return _json_response(self._message_payload(self._msg_in(ch, mid, route="GET")))

    def _make_attachments(self, payload: Dict[str, Any], files: List[Dict[str, Any]],
                          existing: Sequence[Dict[str, Any]] = ()) -> List[Dict[str, Any]]:
        meta = {}
        keep: List[Dict[str, Any]] = []
        by_id = {str(a["id"]): a for a in existing}
        for a in payload.get("attachments") or []:
            aid = str(a.get("id"))
            if aid in by_id:
                keep.append(by_id[aid])
            else:
                meta[aid] = a
        out = list(keep)
        for f in files:
            m = meta.get(str(f["index"]), {})
            a = {"id": self._next_id(), "filename": m.get("filename") or f["filename"], "data": f["data"],
                 "content_type": f.get("content_type"), "description": m.get("description")}
            self._attachments[a["id"]] = a
            out.append(a)
        return out

    def _new_message(self, ch: Channel, author: User, payload: Dict[str, Any], files: List[Dict[str, Any]], *,
                     ephemeral_to: Optional[int] = None, webhook: bool = False, interaction: Optional[Dict[str, Any]] = None,
                     msg_type: int = 0, extra_flags: int = 0) -> Message:
        allowed = FLAG_SUPPRESS_EMBEDS | FLAG_SUPPRESS_NOTIFICATIONS | FLAG_COMPONENTS_V2
        flags = (int(payload.get("flags") or 0) & allowed) | extra_flags
        if ephemeral_to is not None:
            flags |= FLAG_EPHEMERAL
        embeds = list(payload.get("embeds") or [])
        if ch.guild_id and author.id == self.bot_user.id and not webhook and embeds and \
                not self.permissions_in(ch, self.bot_user) & EMBED_LINKS:
            embeds = []  # Discord silently drops embeds without Embed Links
        ref = payload.get("message_reference")
        if ref and not ref.get("message_id"):
            ref = None
        m = Message(
            id=self._next_id(),
            channel_id=ch.id,
            author=author,
            content=payload.get("content") or "",
            embeds=embeds,
            components=validation.with_ids(payload.get("components")),
            attachments=self._make_attachments(payload, files),
            flags=flags,
            type=19 if ref and msg_type == 0 else msg_type,
            guild_id=ch.guild_id,
            ephemeral_to=ephemeral_to,
            webhook_id=self.application_id if webhook else None,
            application_id=self.application_id if webhook else None,
            interaction=interaction,
            message_reference=({"type": 0, "message_id": str(ref["message_id"]),
                                "channel_id": str(ref.get("channel_id") or ch.id),
                                **({"guild_id": str(ch.guild_id)} if ch.guild_id else {})} if ref else None),
            tts=bool(payload.get("tts")),
        )
        am = payload.get("allowed_mentions")
        m.allowed_mentions = am if isinstance(am, dict) else None
        m.pinged = self._who_is_pinged(m, am)
        self._messages[m.id] = m
        self._channel_messages.setdefault(ch.id, []).append(m)
        if ephemeral_to is None:
            ch.last_message_id = m.id
            if ch.is_thread:
                ch.message_count += 1
                ch.total_message_sent += 1
        if self.message_listeners:
            self._notify(m, "create")
        return m

    def _who_is_pinged(self, m: Message, am: Any) -> List[int]:
        """Whom Discord notifies for a new message: user mentions in the content, filtered by
        ``allowed_mentions`` (absent: every mention pings); the replied-to author when allowed.
        Ephemeral and @silent messages notify nobody; nobody is notified of their own message."""
        if m.ephemeral_to is not None or m.flags & FLAG_SUPPRESS_NOTIFICATIONS:
            return []
        mentioned = m.mentions
        if not isinstance(am, dict):
            out = list(mentioned)
            replied = True
        else:
            if "users" in (am.get("parse") or []):
                out = list(mentioned)
            else:
                allowed = {int(u) for u in am.get("users") or []}
                out = [u for u in mentioned if u in allowed]
            replied = bool(am.get("replied_user"))
        if replied and m.message_reference:
            target = self._messages.get(int(m.message_reference["message_id"]))
            if target is not None and target.author.id not in out:
                out.append(target.author.id)
        for u in self._pinged_by_role_or_everyone(m, am):
            if u not in out:
                out.append(u)
        return [u for u in out if u != m.author.id]

    def _pinged_by_role_or_everyone(self, m: Message, am: Any) -> List[int]:
        """The members a message notifies through ``<@&role>`` or ``@everyone``/``@here``: when its
        ``allowed_mentions`` lets them through (absent: all), and the role is mentionable or the
        author may mention everyone (Mention @everyone, @here and All Roles)."""
        guild = self.guilds.get(m.guild_id) if m.guild_id else None
        ch = self.channels.get(m.channel_id)
        if guild is None or ch is None:
            return []
        parse = (am.get("parse") or []) if isinstance(am, dict) else ["roles", "everyone"]
        allowed_roles = {int(r) for r in (am.get("roles") or [])} if isinstance(am, dict) else set()
        may_all = bool(self.permissions_in(ch, m.author) & MENTION_EVERYONE)
        out: List[int] = []
        for rid in dict.fromkeys(int(r) for r in ROLE_MENTION_RE.findall(m.mention_text())):
            role = guild.roles.get(rid)
            if role is None or not ("roles" in parse or rid in allowed_roles) or not (role.mentionable or may_all):
                continue
            out += [u for u, member in guild.members.items() if rid in member.roles and u not in out]
        if re.search(r"@(everyone|here)\b", m.mention_text()) and "everyone" in parse and may_all:
            out += [u for u in guild.members if u not in out and self.permissions_in(ch, self.users[u]) & VIEW_CHANNEL]
        return out

    def pings(self, channel: Optional[Channel] = None) -> List[tuple]:
        """``(message, user_id)`` for every notification a message caused, oldest first
        (optionally only in one channel or thread); deleted messages included."""
        cid = self._as_channel(channel).id if channel is not None else None
        return [(m, u) for m in sorted(self._messages.values(), key=lambda m: m.id)
                if cid is None or m.channel_id == cid for u in m.pinged]

    @staticmethod
    def _filenames_after(payload: Dict[str, Any], files: List[Dict[str, Any]],
                         existing: Sequence[Dict[str, Any]] = ()) -> set:
        """The names of the attachments a message will have once this body is applied (what its
        components' ``attachment://`` may name): the kept ones and the uploaded ones."""
        meta = {str(a.get("id")): a for a in payload.get("attachments") or [] if isinstance(a, dict)}
        if "attachments" in payload:
            kept = [a["filename"] for a in existing if str(a["id"]) in meta]
        else:
            kept = [a["filename"] for a in existing]
        return {*kept, *((meta.get(str(f["index"])) or {}).get("filename") or f["filename"] for f in files)}

    def _validate(self, payload: Dict[str, Any], files: List[Dict[str, Any]], *, partial: bool, where: str,
                  flags: Optional[int] = None, message: Optional[Message] = None) -> None:
        """Refuse a body Discord would refuse (400/50035; 50006 for an empty message). ``message``:
        the message an edit changes (what it becomes is checked, e.g. a Components V2 message
        keeps its flag and gets no content)."""
        current = None if message is None else {"flags": message.flags, "content": message.content,
                                                "embeds": message.embeds}
        problems = validation.check_message(payload, has_files=bool(files), partial=partial, flags=flags,
                                            current=current, files=self._filenames_after(
                                                payload, files, message.attachments if message else ()))
        if problems:
            for p in problems:
                self.violation(f"{where}: {p}")
            raise ApiError(400, 50035 if "empty" not in problems[0] else 50006,
                           "Cannot send an empty message" if "empty" in problems[0] else "Invalid Form Body",
                           errors={"_errors": [{"code": "BASE_TYPE_INVALID", "message": p} for p in problems]})

    def _check_reference(self, ch: Channel, payload: Dict[str, Any]) -> None:
        ref = payload.get("message_reference")
        if not ref or not ref.get("message_id"):
            return
        target = self._messages.get(int(ref["message_id"]))
        if target is None or target.deleted or target.ephemeral_to is not None:
            if ref.get("fail_if_not_exists", True):
                raise ApiError(400, 50035, "Invalid Form Body",
                               errors={"message_reference": {"_errors": [{"code": "REPLIES_UNKNOWN_MESSAGE",
                                                                          "message": "Unknown message"}]}})
            payload.pop("message_reference", None)

    def _ensure_writable_thread(self, ch: Channel, *, edit: bool) -> None:
        if not ch.is_thread or not ch.archived:
            return
        if edit or ch.locked:
            raise ApiError(400, 50083, "Thread is archived",
                           violation=f"{'edit in' if edit else 'message to'} archived{' locked' if ch.locked else ''} thread #{ch.name}")
        # sending a message unarchives an unlocked thread
        ch.archived = False
        ch.archive_timestamp = iso()
        self._dispatch("THREAD_UPDATE", ch.payload(), intent=INTENT_GUILDS)

    async def _r_create_message(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid, for_send=True, what="message sent to")
        payload = body or {}
        if ch.type == 1:
            if ch.recipient is not None and not ch.recipient.dms_open:
                raise ApiError(403, 50007, "Cannot send messages to this user")
        else:
            self._require(ch, SEND_IN_THREADS if ch.is_thread else SEND_MESSAGES, "send message")
            if files:
                self._require(ch, ATTACH_FILES, "attach files")
        self._validate(payload, files, partial=False, where=f"message to #{ch.name}")
        if int(payload.get("flags") or 0) & FLAG_EPHEMERAL:
            self.violation(f"message to #{ch.name} with the ephemeral flag outside an interaction (ignored by Discord)")
        self._check_reference(ch, payload)
        nonce = payload.get("nonce")
        key = (ch.id, self.bot_user.id, str(nonce))
        if nonce is not None and payload.get("enforce_nonce"):
            # Discord: the same author's message with this nonce in the last few
            # minutes is returned, and no new message is created
            seen = self._nonces.get(key)
            old = self._messages.get(seen[1]) if seen is not None and time.time() - seen[0] < NONCE_WINDOW else None
            if old is not None and not old.deleted:
                return _json_response(self._message_payload(old))
        self._ensure_writable_thread(ch, edit=False)
        m = self._new_message(ch, self.bot_user, payload, files)
        if nonce is not None and payload.get("enforce_nonce"):
            self._nonces[key] = (time.time(), m.id)
        self._dispatch_message("MESSAGE_CREATE", m)
        return _json_response(self._message_payload(m))

    def _edit_bucket(self, ch: Channel) -> Dict[str, str]:
        limit, per = self.edit_rate
        now = time.time()
        b = self._edit_buckets.setdefault(ch.id, [now, 0])
        if now >= b[0] + per:
            b[0], b[1] = now, 0
        reset = b[0] + per
        if b[1] >= limit:
            retry = max(0.001, reset - now)
            headers = {"Via": "1.1 google", "Retry-After": str(max(1, int(retry + 0.999))),
                       "X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": "0",
                       "X-RateLimit-Reset": f"{reset:.3f}", "X-RateLimit-Reset-After": f"{retry:.3f}",
                       "X-RateLimit-Bucket": "fakeeditbucket", "X-RateLimit-Scope": "user"}
            raise _Raw429({"message": "You are being rate limited.", "retry_after": round(retry, 3), "global": False},
                          headers)
        b[1] += 1
        return {"X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(limit - b[1]),
                "X-RateLimit-Reset": f"{reset:.3f}", "X-RateLimit-Reset-After": f"{max(0.0, reset - now):.3f}",
                "X-RateLimit-Bucket": "fakeeditbucket"}

    def _apply_edit(self, m: Message, payload: Dict[str, Any], files: List[Dict[str, Any]], *, where: str,
                    route: str, loading_fill: bool = False, check_mentions: bool = True) -> None:
        """Apply a (partial) message edit; records the 'mention added by edit' warning and the
        route of the edit (``route``: see :attr:`Message.edited_by`)."""
        m.edited_by.append(route)
        old_mentions = set(m.mentions)
        if self.keep_history:
            m.history.append(m.snapshot())
        old_attachments = m.attachments
        if "content" in payload:
            m.content = payload["content"] or ""
        if "embeds" in payload:
            m.embeds = list(payload["embeds"] or [])
        if "components" in payload:
            m.components = validation.with_ids(payload["components"])
        if "attachments" in payload or files:
            m.attachments = self._make_attachments(payload if "attachments" in payload else
                                                   {"attachments": [{"id": str(a["id"])} for a in m.attachments]},
                                                   files, m.attachments)
        if "flags" in payload and payload["flags"] is not None:
            f = int(payload["flags"])
            m.flags = (m.flags & ~FLAG_SUPPRESS_EMBEDS) | (f & FLAG_SUPPRESS_EMBEDS)
            if f & FLAG_COMPONENTS_V2:
                m.flags |= FLAG_COMPONENTS_V2
        if loading_fill:
            m.flags &= ~FLAG_LOADING
        else:
            m.edit_count += 1
            m.edited_timestamp = iso()
        added = set(m.mentions) - old_mentions
        am = payload.get("allowed_mentions")
        if added and isinstance(am, dict):
            # the bot explicitly said which mentions may ping: only those it still expects to ping matter
            allowed_users = {int(u) for u in am.get("users") or []}
            if "users" not in (am.get("parse") or []):
                added = {u for u in added if u in allowed_users}
        if added and check_mentions and m.ephemeral_to is None:  # ephemeral messages never notify anyway
            self.violation(f"mention added by edit does not notify: {', '.join(f'<@{i}>' for i in sorted(added))} "
                           f"added to message {m.id} ({where}); ping with a new message")
        if not self.keep_history:
            kept = {a["id"] for a in m.attachments}
            for a in old_attachments:
                if a["id"] not in kept:
                    self._attachments.pop(a["id"], None)
        if m.deleted is False:
            m._touch()
        if self.message_listeners:
            self._notify(m, "edit")

    async def _r_edit_message(self, request: web.Request, cid: str, mid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid, for_send=True, what="message edited in")
        m = self._msg_in(ch, mid, route="PATCH")
        payload = body or {}
        if m.author.id != self.bot_user.id:
            if set(payload) - {"flags"}:
                raise ApiError(403, 50005, "Cannot edit a message authored by another user")
            self._require(ch, MANAGE_MESSAGES, "suppress embeds")
        self._ensure_writable_thread(ch, edit=True)
        headers = self._edit_bucket(ch)
        self._validate(payload, files, partial=True, where=f"edit of message {m.id} in #{ch.name}",
                       flags=payload.get("flags", m.flags), message=m)
        self._apply_edit(m, payload, files, where=f"PATCH /channels/{ch.id}/messages/{m.id}",
                         route="channel")
        self._dispatch_message("MESSAGE_UPDATE", m)
        return _json_response(self._message_payload(m), headers=headers)

    def _delete_message(self, m: Message) -> None:
        if m.deleted:
            return
        m.deleted = True
        m._touch()
        if self.message_listeners:
            self._notify(m, "delete")
        if not self.keep_history:
            for a in m.attachments:
                self._attachments.pop(a["id"], None)
        if m.ephemeral_to is None:
            ch = self.channels.get(m.channel_id)
            d = {"id": str(m.id), "channel_id": str(m.channel_id)}
            if ch and ch.guild_id:
                d["guild_id"] = str(ch.guild_id)
            intent = INTENT_DIRECT_MESSAGES if ch is not None and ch.type == 1 else INTENT_GUILD_MESSAGES
            self._dispatch("MESSAGE_DELETE", d, intent=intent)

    async def _r_delete_message(self, request: web.Request, cid: str, mid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        m = self._msg_in(ch, mid, route="DELETE")
        if m.author.id != self.bot_user.id:
            self._require(ch, MANAGE_MESSAGES, "delete message")
        self._delete_message(m)
        return _empty()

    async def _r_bulk_delete(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        self._require(ch, MANAGE_MESSAGES, "bulk delete")
        for mid in (body or {}).get("messages", []):
            m = self._messages.get(int(mid))
            if m and m.channel_id == ch.id:
                self._delete_message(m)
        return _empty()

    async def _r_react(self, request: web.Request, cid: str, mid: str, emoji: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        m = self._msg_in(ch, mid, route="reaction")
        self._require(ch, ADD_REACTIONS | READ_HISTORY, "add reaction")
        from urllib.parse import unquote

        e = unquote(emoji)
        if request.method == "PUT":
            m.reactions.setdefault(e, set()).add(self.bot_user.id)
        else:
            m.reactions.get(e, set()).discard(self.bot_user.id)
        return _empty()

    async def _r_pins(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        pins = [m for m in self.messages(ch) if m.pinned]
        if request.path.endswith("/messages/pins"):
            return _json_response({"items": [{"pinned_at": iso(), "message": self._message_payload(m)} for m in pins],
                                   "has_more": False})
        return _json_response([self._message_payload(m) for m in pins])

    async def _r_pin(self, request: web.Request, cid: str, mid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        m = self._msg_in(ch, mid, route="pin")
        self._require(ch, P(pin_messages=True).value if hasattr(P, "pin_messages") else MANAGE_MESSAGES, "pin")
        m.pinned = request.method == "PUT"
        return _empty()

    # ------------------------------------------------------------------ threads
    def _create_thread(self, parent: Channel, name: str, owner: User, *, type_: int, starter: Optional[Message],
                       auto_archive_duration: int = 1440, id: Optional[int] = None) -> Channel:
        if parent.guild_id is None:
            raise ValueError(f"{parent!r} is not in a server: it cannot have threads")
        tid = starter.id if starter is not None else (self._next_id() if id is None else id)
        t = Channel(id=tid, type=type_, name=name, guild_id=parent.guild_id, parent_id=parent.id, owner_id=owner.id,
                    auto_archive_duration=auto_archive_duration, starter_message_id=starter.id if starter else None)
        t.thread_members[owner.id] = iso()
        self.channels[t.id] = t
        self.guilds[parent.guild_id].channels[t.id] = t
        self._channel_messages[t.id] = []
        payload = {**t.payload(), "newly_created": True}
        if owner.id == self.bot_user.id:
            payload["member"] = {"id": str(t.id), "user_id": str(owner.id), "join_timestamp": t.thread_members[owner.id],
                                 "flags": 0}
        self._dispatch("THREAD_CREATE", payload, intent=INTENT_GUILDS)
        if starter is not None:
            starter.thread_id = t.id
            starter.flags |= FLAG_HAS_THREAD
            self._dispatch_message("MESSAGE_UPDATE", starter)
        elif type_ == 11:
            # Discord posts a "started a thread" system message in the parent
            sysmsg = self._new_message(parent, owner, {"content": name}, [], msg_type=18)
            sysmsg.message_reference = {"type": 0, "channel_id": str(t.id), "guild_id": str(parent.guild_id)}
            sysmsg.thread_id = t.id
            self._dispatch_message("MESSAGE_CREATE", sysmsg)
        return t

    def _check_thread_body(self, body: Dict[str, Any]) -> str:
        name = (body or {}).get("name") or ""
        if not 1 <= len(name) <= 100:
            raise ApiError(400, 50035, "Invalid Form Body", violation=f"thread name must be 1-100 chars ({len(name)})")
        return name

    async def _r_thread_from_message(self, request: web.Request, cid: str, mid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid, for_send=True, what="thread created in")
        if ch.is_thread:
            raise ApiError(400, 50024, "Cannot execute action on this channel type")
        m = self._msg_in(ch, mid, route="start thread")
        self._require(ch, CREATE_PUBLIC_THREADS | READ_HISTORY, "create public thread")
        name = self._check_thread_body(body)
        if m.thread_id is not None:
            raise ApiError(400, 160004, "A thread has already been created for this message")
        t = self._create_thread(ch, name, self.bot_user, type_=11 if ch.type == 0 else 10, starter=m,
                                auto_archive_duration=int(body.get("auto_archive_duration") or 1440))
        return _json_response(t.payload(), 201)

    async def _r_thread_create(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid, for_send=True, what="thread created in")
        if ch.is_thread:
            raise ApiError(400, 50024, "Cannot execute action on this channel type")
        body = body or {}
        type_ = int(body.get("type") or 12)
        self._require(ch, CREATE_PRIVATE_THREADS if type_ == 12 else CREATE_PUBLIC_THREADS, "create thread")
        name = self._check_thread_body(body)
        t = self._create_thread(ch, name, self.bot_user, type_=type_, starter=None,
                                auto_archive_duration=int(body.get("auto_archive_duration") or 1440))
        if "invitable" in body:
            t.invitable = bool(body["invitable"])
        return _json_response(t.payload(), 201)

    async def _r_archived_threads(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        ch = self._channel(cid)
        private = "private" in request.path
        ts = [t for t in self.threads(ch) if t.archived and (t.type == 12) == private]
        return _json_response({"threads": [t.payload() for t in ts], "members": [], "has_more": False})

    def _thread_member_payload(self, t: Channel, uid: int) -> Dict[str, Any]:
        return {"id": str(t.id), "user_id": str(uid), "join_timestamp": t.thread_members[uid], "flags": 0}

    async def _r_thread_member(self, request: web.Request, cid: str, who: str, *, body: Any, files: Any) -> web.Response:
        t = self._channel(cid, for_send=request.method == "PUT", what="thread joined in")
        if not t.is_thread:
            raise ApiError(400, 50024, "Cannot execute action on this channel type")
        uid = self.bot_user.id if who == "@me" else int(who)
        if request.method == "PUT":
            if t.archived:
                raise ApiError(400, 50083, "Thread is archived")
            if uid not in self.users:
                raise ApiError(404, 10013, "Unknown User")
            t.thread_members.setdefault(uid, iso())
            return _empty()
        if request.method == "DELETE":
            t.thread_members.pop(uid, None)
            return _empty()
        if uid not in t.thread_members:
            raise ApiError(404, 10033, "Unknown Thread Member")
        return _json_response(self._thread_member_payload(t, uid))

    async def _r_thread_members(self, request: web.Request, cid: str, *, body: Any, files: Any) -> web.Response:
        t = self._channel(cid)
        return _json_response([self._thread_member_payload(t, u) for u in t.thread_members])

    # ------------------------------------------------------------------ interactions (user side)
    def _check_user_in(self, user: User, channel: Channel) -> Optional[Guild]:
        """The server of an interaction of ``user`` in ``channel`` (None: their DM with the bot)."""
        guild = self.guild_of(channel)
        if guild is None and channel.type == 1:
            if getattr(channel, "recipient", None) is not user:
                raise ValueError(f"{user!r} is not in the DM {channel!r}")
            return None
        if guild is None:
            raise ValueError("interactions are simulated in server channels and the user's DM with the bot only")
        if channel.deleted:
            raise ValueError(f"{channel!r} was deleted")
        if user.id not in guild.members:
            raise ValueError(f"{user!r} is not a member of {guild!r}")
        if not self.permissions_in(channel, user) & VIEW_CHANNEL:
            raise ValueError(f"{user!r} cannot see {channel!r}")
        return guild

    def _interaction_payload(self, rec: _Interaction) -> Dict[str, Any]:
        ch, g, user = rec.channel, rec.guild, rec.user
        cp = ch.payload()
        cp["permissions"] = str(self.permissions_in(ch, user))
        d: Dict[str, Any]
        if g is None:  # a DM with the bot: a user, no member, no server
            d = {
                "id": str(rec.id), "application_id": str(self.application_id), "type": rec.type,
                "data": rec.data, "channel_id": str(ch.id), "channel": cp, "user": user.payload(),
                "token": rec.token, "version": 1, "app_permissions": str(self.permissions_in(ch, self.bot_user)),
                "locale": user.locale, "entitlements": [], "entitlement_sku_ids": [],
                "authorizing_integration_owners": {"0": "0"}, "context": 1,
                "attachment_size_limit": 10 * 1024 * 1024,
            }
        else:
            d = {
                "id": str(rec.id),
                "application_id": str(self.application_id),
                "type": rec.type,
                "data": rec.data,
                "guild_id": str(g.id),
                "guild": {"id": str(g.id), "locale": g.locale, "features": []},
                "channel_id": str(ch.id),
                "channel": cp,
                "member": g.members[user.id].payload(permissions=self.permissions_in(ch, user)),
                "token": rec.token,
                "version": 1,
                "app_permissions": str(self.permissions_in(ch, self.bot_user)),
                "locale": user.locale,
                "guild_locale": g.locale,
                "entitlements": [],
                "entitlement_sku_ids": [],
                "authorizing_integration_owners": {"0": str(g.id)},
                "context": 0,
                "attachment_size_limit": 10 * 1024 * 1024,
            }
        if rec.message is not None:
            d["message"] = self._message_payload(rec.message)
            if rec.claim is not None:  # a forged click (see ``forge``)
                d["message"]["components"] = [*(rec.message.components or []), rec.claim]
        return d

    async def _run_interaction(self, rec: _Interaction, *, timeout: Optional[float] = None) -> InteractionResult:
        self._interactions[rec.id] = rec
        self._by_token[rec.token] = rec
        gid = rec.guild.id if rec.guild is not None else None
        if not [s for s in self._live_sessions() if self._session_gets(s, gid)]:
            raise NoAcknowledgement(f"no bot session of this server's shard is connected to the gateway: "
                                    f"{rec.describe()} was never delivered "
                                    f"(the user sees 'The application did not respond'). Await fd.wait_ready() first.")
        loop = asyncio.get_running_loop()
        deadline = self.ack_deadline

        def expire() -> None:
            rec.expired = True

        loop.call_later(deadline, expire)
        payload = self._interaction_payload(rec)
        connected = any(s.conn is not None and not s.conn.closed for s in self._live_sessions()
                        if self._session_gets(s, gid))
        self._dispatch("INTERACTION_CREATE", payload, guild_id=gid)
        try:
            await asyncio.wait_for(asyncio.shield(rec.ack_future), timeout if timeout is not None else deadline + 0.05)
        except asyncio.TimeoutError:
            if not connected and rec.ack_type is None:
                raise NoAcknowledgement(
                    f"{rec.describe()} was dispatched while no bot session was connected (only buffered for a "
                    f"RESUME) and was not acknowledged within {deadline:g}s - the user sees 'The application did "
                    f"not respond' and has to try again.{self._diagnostics()}") from None
            self.violation(f"interaction {rec.describe()} not acknowledged within {deadline:g} s "
                           f"(user sees 'The application did not respond')")
            raise NoAcknowledgement(f"the bot did not acknowledge interaction {rec.describe()} within {deadline:g}s."
                                    f"{self._diagnostics()}") from None
        return InteractionResult(rec)

    def _resolve_command_path(self, channel: Channel, path: str, ctype: int = 1) -> Tuple[Dict[str, Any], List[str]]:
        parts = path.split()
        if not parts:
            raise ValueError("empty command path")
        name = parts[0].lstrip("/")
        guild = self.guild_of(channel)
        cands = (self._guild_commands.get(guild.id, []) if guild else []) + self._global_commands
        for c in cands:
            if c["name"] == name and c.get("type", 1) == ctype:
                return c, parts[1:]
        known = sorted({c["name"] for c in cands})
        raise LookupError(f"no registered command {name!r} (type {ctype}); registered: {known}")

    def _convert_option(self, o: Dict[str, Any], value: Any, guild: Optional[Guild], resolved: Dict[str, Dict[str, Any]],
                        channel: Channel) -> Any:
        t = o["type"]
        n = o["name"]
        choices = o.get("choices") or []

        def check_choice(v: Any) -> None:
            if choices and v not in [c["value"] for c in choices]:
                raise ValueError(f"option {n!r}: {v!r} is not one of the choices {[c['value'] for c in choices]}")

        if t == 3:
            if not isinstance(value, str):
                raise TypeError(f"option {n!r} is a string option, got {value!r}")
            if "min_length" in o and len(value) < o["min_length"] or "max_length" in o and len(value) > o["max_length"]:
                raise ValueError(f"option {n!r}: length {len(value)} outside {o.get('min_length')}..{o.get('max_length')}")
            check_choice(value)
            return value
        if t in (4, 10):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (t == 4 and not isinstance(value, int)):
                raise TypeError(f"option {n!r} is {'an integer' if t == 4 else 'a number'} option, got {value!r}")
            if o.get("min_value") is not None and value < o["min_value"] or \
                    o.get("max_value") is not None and value > o["max_value"]:
                raise ValueError(f"option {n!r}: {value} outside {o.get('min_value')}..{o.get('max_value')}")
            check_choice(value)
            return value
        if t == 5:
            if not isinstance(value, bool):
                raise TypeError(f"option {n!r} is a boolean option, got {value!r}")
            return value
        if t in (6, 9) and isinstance(value, (User, Member)):
            u = value.user if isinstance(value, Member) else value
            resolved.setdefault("users", {})[str(u.id)] = u.payload()
            if guild is not None and u.id in guild.members:
                resolved.setdefault("members", {})[str(u.id)] = guild.members[u.id].payload(
                    with_user=False, permissions=self.permissions_in(channel, u))
            return str(u.id)
        if t in (8, 9) and isinstance(value, Role):
            resolved.setdefault("roles", {})[str(value.id)] = value.payload()
            return str(value.id)
        if t == 7 and isinstance(value, Channel):
            if o.get("channel_types") and value.type not in o["channel_types"]:
                raise ValueError(f"option {n!r}: channel type {value.type} not in {o['channel_types']}")
            cp = {k: v for k, v in value.payload().items() if k in ("id", "name", "type", "parent_id", "thread_metadata")}
            cp["permissions"] = str(self.permissions_in(value, self.bot_user))
            resolved.setdefault("channels", {})[str(value.id)] = cp
            return str(value.id)
        if t == 11:
            if isinstance(value, tuple) and len(value) == 2:
                filename, data = value
            elif isinstance(value, dict):
                filename, data = value["filename"], value["data"]
            else:
                raise TypeError(f"option {n!r} is an attachment option: pass (filename, bytes)")
            a = {"id": self._next_id(), "filename": filename, "data": bytes(data), "content_type": None}
            self._attachments[a["id"]] = a
            resolved.setdefault("attachments", {})[str(a["id"])] = self._attachment_payload(a, True)
            return str(a["id"])
        raise TypeError(f"option {n!r} (type {t}): unsupported value {value!r}")

    def _build_options(self, schema: List[Dict[str, Any]], kwargs: Dict[str, Any], guild: Optional[Guild], channel: Channel,
                       resolved: Dict[str, Dict[str, Any]], focused: Optional[str] = None) -> List[Dict[str, Any]]:
        by_name = {o["name"]: o for o in schema}
        unknown = set(kwargs) - set(by_name)
        if unknown:
            raise TypeError(f"unknown option(s) {sorted(unknown)}; the command takes {sorted(by_name)}")
        out = []
        for o in schema:
            n = o["name"]
            if n not in kwargs or kwargs[n] is None:
                if o.get("required") and n != focused:
                    raise TypeError(f"missing required option {n!r}")
                continue
            if n == focused:
                out.append({"name": n, "type": o["type"], "value": str(kwargs[n]), "focused": True})
                continue
            out.append({"name": n, "type": o["type"],
                        "value": self._convert_option(o, kwargs[n], guild, resolved, channel)})
        return out

    def _command_data(self, channel: Channel, path: str, kwargs: Dict[str, Any], focused: Optional[str] = None
                      ) -> Tuple[Dict[str, Any], str]:
        guild = self.guild_of(channel)
        cmd, rest = self._resolve_command_path(channel, path)
        resolved: Dict[str, Dict[str, Any]] = {}
        schema = cmd.get("options") or []
        chain: List[Dict[str, Any]] = []
        for token in rest:
            sub = next((o for o in schema if o["name"] == token and o["type"] in (1, 2)), None)
            if sub is None:
                raise LookupError(f"{path!r}: {token!r} is not a subcommand/group; have "
                                  f"{[o['name'] for o in schema if o['type'] in (1, 2)]}")
            chain.append(sub)
            schema = sub.get("options") or []
        if any(o["type"] in (1, 2) for o in schema):
            raise LookupError(f"{path!r} is a group; pick one of {[o['name'] for o in schema]}")
        opts = self._build_options(schema, kwargs, guild, channel, resolved, focused)
        for sub in reversed(chain):
            opts = [{"name": sub["name"], "type": sub["type"], "options": opts}]
        data: Dict[str, Any] = {"id": cmd["id"], "name": cmd["name"], "type": 1, "options": opts}
        if resolved:
            data["resolved"] = resolved
        if cmd.get("guild_id"):
            data["guild_id"] = cmd["guild_id"]
        return data, " ".join([cmd["name"], *rest])

    async def slash(self, user: User, channel: Channel, path: str, /, *, _timeout: Optional[float] = None,
                    **options: Any) -> InteractionResult:
        """``user`` runs ``/path`` (e.g. "nimmt new") in ``channel`` with typed ``options``."""
        channel = self._as_channel(channel)
        guild = self._check_user_in(user, channel)
        if not self.permissions_in(channel, user) & P(use_application_commands=True).value:
            raise PermissionError(f"{user!r} may not use application commands in {channel!r}")
        if guild is None:
            cmd, _ = self._resolve_command_path(channel, path)
            contexts = cmd.get("contexts")
            if cmd.get("dm_permission") is False or (contexts is not None and 1 not in contexts):
                raise LookupError(f"Discord does not offer /{cmd['name']} in DMs (dm_permission/contexts)")
        data, name = self._command_data(channel, path, options)
        rec = _Interaction(self, id=self._next_id(), type=2, user=user, channel=channel, guild=guild, data=data,
                           message=None, name="/" + name)
        return await self._run_interaction(rec, timeout=_timeout)

    async def forge_slash(self, user: User, channel: Channel, path: str, /, *,
                          options: Optional[List[Any]] = None, **values: Any) -> InteractionResult:
        """A slash command as a modified client can send it: the command (and subcommand path) as
        registered, option values unchecked.  ``values``: name -> any JSON value, typed as the
        command declares that option (an unknown name as a string option); ``options``: the raw
        list of the innermost options instead (anything at all)."""
        channel = self._as_channel(channel)
        guild = self._check_user_in(user, channel)
        cmd, rest = self._resolve_command_path(channel, path)
        schema = cmd.get("options") or []
        chain: List[Dict[str, Any]] = []
        for token in rest:
            sub = next((o for o in schema if o["name"] == token and o["type"] in (1, 2)), None)
            if sub is None:  # a subcommand the bot does not have
                sub = {"name": token, "type": 1, "options": []}
            chain.append(sub)
            schema = sub.get("options") or []
        if options is None:
            declared = {o["name"]: o["type"] for o in schema}
            options = [{"name": name, "type": declared.get(name, 3), "value": value} for name, value in values.items()]
        opts: List[Any] = list(options)
        for sub in reversed(chain):
            opts = [{"name": sub["name"], "type": sub["type"], "options": opts}]
        data: Dict[str, Any] = {"id": cmd["id"], "name": cmd["name"], "type": 1, "options": opts}
        if cmd.get("guild_id"):
            data["guild_id"] = cmd["guild_id"]
        name = " ".join([cmd["name"], *rest])
        rec = _Interaction(self, id=self._next_id(), type=2, user=user, channel=channel, guild=guild, data=data,
                           message=None, name=f"forged /{name} {options!r}"[:200])
        return await self._run_interaction(rec)

    async def autocomplete(self, user: User, channel: Channel, path: str, focused: str, /,
                           **options: Any) -> List[Dict[str, Any]]:
        """Simulate typing in option ``focused``; returns the bot's choices."""
        guild = self._check_user_in(user, channel)
        options.setdefault(focused, "")
        data, name = self._command_data(channel, path, options, focused=focused)
        rec = _Interaction(self, id=self._next_id(), type=4, user=user, channel=channel, guild=guild, data=data,
                           message=None, name=f"autocomplete /{name} {focused}")
        r = await self._run_interaction(rec)
        return r.choices or []

    async def context_menu(self, user: User, channel: Channel, name: str, target: Union[User, Message]) -> InteractionResult:
        """Run a user (target User) or message (target Message) context-menu command."""
        guild = self._check_user_in(user, channel)
        ctype = 3 if isinstance(target, Message) else 2
        cmd, _ = self._resolve_command_path(channel, name, ctype)
        resolved: Dict[str, Any] = {}
        if isinstance(target, Message):
            resolved["messages"] = {str(target.id): self._message_payload(target)}
        else:
            resolved["users"] = {str(target.id): target.payload()}
            if guild is not None and target.id in guild.members:
                resolved["members"] = {str(target.id): guild.members[target.id].payload(with_user=False)}
        data = {"id": cmd["id"], "name": cmd["name"], "type": ctype, "target_id": str(target.id), "resolved": resolved}
        if cmd.get("guild_id"):
            data["guild_id"] = cmd["guild_id"]
        rec = _Interaction(self, id=self._next_id(), type=2, user=user, channel=channel, guild=guild, data=data,
                           message=None, name=cmd["name"])
        return await self._run_interaction(rec)

    def _component_source(self, user: User, message: Union[Message, int]) -> Tuple[Message, Channel, Optional[Guild]]:
        m = message if isinstance(message, Message) else self._messages.get(int(message))
        if m is None:
            raise LookupError(f"unknown message {message!r}")
        if m.deleted:
            raise LookupError(f"{m!r} was deleted; the user cannot click on it")
        if m.ephemeral_to is not None and m.ephemeral_to != user.id:
            raise PermissionError(f"{m!r} is ephemeral to another user; {user.name} cannot see it")
        ch = self.channels[m.channel_id]
        guild = self._check_user_in(user, ch)
        return m, ch, guild

    async def click(self, user: User, message: Union[Message, int], custom_id: str) -> InteractionResult:
        m, ch, guild = self._component_source(user, message)
        btn = next((b for b in m.buttons() if b["custom_id"] == custom_id), None)
        if btn is None:
            raise LookupError(f"{m!r} has no button with custom_id {custom_id!r}; buttons: "
                              f"{[(b['label'], b['custom_id']) for b in m.buttons()]}")
        if btn["disabled"]:
            raise PermissionError(f"button {btn['label']!r} ({custom_id!r}) on {m!r} is disabled")
        if btn["style"] == 5:
            raise ValueError(f"button {btn['label']!r} is a link button")
        return await self._component_interaction(user, m, ch, guild, {"custom_id": custom_id, "component_type": 2},
                                                 f"click {btn['label'] or custom_id!r}")

    async def click_label(self, user: User, message: Union[Message, int], label: str) -> InteractionResult:
        m, _, _ = self._component_source(user, message)
        btns = [b for b in m.buttons() if b["label"] == label and b["custom_id"]]
        if not btns:
            btns = [b for b in m.buttons() if b["custom_id"] and label.lower() in (b["label"] or "").lower()]
        if len(btns) != 1:
            raise LookupError(f"{len(btns)} buttons match label {label!r} on {m!r}; buttons: "
                              f"{[(b['label'], b['custom_id']) for b in m.buttons()]}")
        return await self.click(user, m, btns[0]["custom_id"])

    async def select(self, user: User, message: Union[Message, int], custom_id: str, values: Sequence[Any]) -> InteractionResult:
        m, ch, guild = self._component_source(user, message)
        sel = next((s for s in m.selects() if s["custom_id"] == custom_id), None)
        if sel is None:
            raise LookupError(f"{m!r} has no select with custom_id {custom_id!r}; selects: {[s['custom_id'] for s in m.selects()]}")
        if sel["disabled"]:
            raise PermissionError(f"select {custom_id!r} is disabled")
        vals = list(values)
        if not sel["min_values"] <= len(vals) <= sel["max_values"]:
            raise ValueError(f"select {custom_id!r} takes {sel['min_values']}..{sel['max_values']} values, got {len(vals)}")
        data: Dict[str, Any] = {"custom_id": custom_id, "component_type": sel["type"]}
        if sel["type"] == 3:
            bad = [v for v in vals if v not in sel["values"]]
            if bad:
                raise ValueError(f"select {custom_id!r}: {bad} not among the options {sel['values']}")
            data["values"] = vals
        else:
            resolved: Dict[str, Dict[str, Any]] = {}
            out = []
            for v in vals:
                if isinstance(v, User):
                    resolved.setdefault("users", {})[str(v.id)] = v.payload()
                    if guild is not None and v.id in guild.members:
                        resolved.setdefault("members", {})[str(v.id)] = guild.members[v.id].payload(with_user=False)
                elif isinstance(v, Role):
                    resolved.setdefault("roles", {})[str(v.id)] = v.payload()
                elif isinstance(v, Channel):
                    resolved.setdefault("channels", {})[str(v.id)] = {**v.payload(), "permissions": "0"}
                else:
                    raise TypeError(f"select {custom_id!r} (type {sel['type']}) needs User/Role/Channel objects")
                out.append(str(v.id))
            data["values"] = out
            data["resolved"] = resolved
        return await self._component_interaction(user, m, ch, guild, data, f"select {custom_id!r}={vals}")

    async def forge(self, user: User, message: Union[Message, int], custom_id: str, *, component_type: int = 2,
                    values: Optional[Sequence[str]] = None, claimed: bool = True) -> InteractionResult:
        """A component interaction as a modified client or a self-bot can send it: any ``custom_id`` (up to
        100 characters) and any string ``values``, checked against nothing the message offers.

        ``claimed=True``: the copy of the message in the payload also carries the forged component (an extra
        action row), the worst case, so that the bot's own routing reaches its handlers; ``claimed=False``:
        the message exactly as stored (discord.py then finds no such component on it)."""
        m, ch, guild = self._component_source(user, message)
        if not 1 <= len(custom_id) <= 100:
            raise ValueError("Discord refuses a custom_id outside 1..100 characters")
        data: Dict[str, Any] = {"custom_id": custom_id, "component_type": component_type}
        vals = [str(v) for v in (values or [])]
        if component_type != 2:
            data["values"] = vals
        claim: Optional[Dict[str, Any]] = None
        if claimed:
            if component_type == 2:
                part: Dict[str, Any] = {"type": 2, "style": 2, "label": "forged", "custom_id": custom_id}
            else:
                part = {"type": component_type, "custom_id": custom_id, "min_values": 0, "max_values": max(1, len(vals)),
                        "options": [{"label": v[:100] or "-", "value": v[:100] or "-"} for v in vals[:25]]}
            claim = {"type": 1, "components": [part]}
        return await self._component_interaction(user, m, ch, guild, data, f"forged {custom_id!r}={vals}", claim=claim)

    async def _component_interaction(self, user: User, m: Message, ch: Channel, guild: Optional[Guild],
                                     data: Dict[str, Any], name: str, claim: Optional[Dict[str, Any]] = None) -> InteractionResult:
        rec = _Interaction(self, id=self._next_id(), type=3, user=user, channel=ch, guild=guild, data=data,
                           message=m, name=name)
        rec.claim = claim
        if m.ephemeral_to is not None:
            m.tokens.add(rec.token)
        return await self._run_interaction(rec)

    async def submit_modal(self, user: User, result: InteractionResult,
                           values: Mapping[str, Union[str, Sequence[str]]]) -> InteractionResult:
        """Fill in the modal the bot opened (``result.ack_type == 9``) with {custom_id: text} and submit it
        (a select menu in a label takes a list of the values picked)."""
        src = result.interaction
        modal = src.modal
        if modal is None:
            raise LookupError("that interaction was not answered with a modal")
        comps = []
        ids = []
        for row in modal.get("components") or []:
            if row.get("type") == 1:
                for c in row.get("components") or []:
                    ids.append(c.get("custom_id"))
                    comps.append({"type": 1, "components": [{"type": c.get("type", 4), "custom_id": c.get("custom_id"),
                                                             "value": values.get(c.get("custom_id"), "")}]})
            elif row.get("type") == 18:
                label: Dict[str, Any] = row.get("component") or {}
                ids.append(label.get("custom_id"))
                entry: Dict[str, Any] = {"type": label.get("type", 4), "custom_id": label.get("custom_id")}
                if label.get("type", 4) == 4:
                    entry["value"] = values.get(label.get("custom_id", ""), "")
                else:
                    v = values.get(label.get("custom_id", ""), [])
                    entry["values"] = list(v) if isinstance(v, (list, tuple)) else [v]
                comps.append({"type": 18, "component": entry})
            elif row.get("type") == 10:
                continue
        unknown = set(values) - set(ids)
        if unknown:
            raise LookupError(f"modal has no fields {sorted(unknown)}; fields: {ids}")
        for row in modal.get("components") or []:
            for c in (row.get("components") or []) + ([row["component"]] if row.get("component") else []):
                if c.get("type", 4) == 4:
                    v = values.get(c.get("custom_id"), "")
                    if c.get("required", True) and not v:
                        raise ValueError(f"modal field {c.get('custom_id')!r} is required")
                    if c.get("max_length") and len(v) > c["max_length"] or c.get("min_length") and v and len(v) < c["min_length"]:
                        raise ValueError(f"modal field {c.get('custom_id')!r}: length {len(v)} outside limits")
        data = {"custom_id": modal["custom_id"], "components": comps}
        rec = _Interaction(self, id=self._next_id(), type=5, user=user, channel=src.channel, guild=src.guild,
                           data=data, message=src.message, name=f"modal {modal['custom_id']!r}")
        if src.message is not None and src.message.ephemeral_to is not None:
            src.message.tokens.add(rec.token)
        return await self._run_interaction(rec)

    # ------------------------------------------------------------------ interaction callbacks (bot side)
    async def _r_interaction_callback(self, request: web.Request, iid: str, token: str, *, body: Any, files: Any) -> web.Response:
        rec = self._interactions.get(int(iid))
        if rec is None or rec.token != token:
            raise ApiError(404, 10062, "Unknown interaction")
        body = body or {}
        cb = body.get("type")
        data = body.get("data") or {}
        if rec.ack_type is not None:
            raise ApiError(400, 40060, "Interaction has already been acknowledged.",
                           violation=f"interaction {rec.describe()} acknowledged twice (second callback type {cb})")
        loop = asyncio.get_running_loop()
        if rec.expired or loop.time() - rec.dispatched_at > self.ack_deadline:
            rec.expired = True
            raise ApiError(404, 10062, "Unknown interaction",
                           violation=f"interaction {rec.describe()} acknowledged after {self.ack_deadline:g} s "
                                     f"({loop.time() - rec.dispatched_at:.2f} s)")
        where = f"interaction response to {rec.describe()}"
        flags = int(data.get("flags") or 0)
        kind = {2: "command", 3: "component", 4: "autocomplete", 5: "modal"}[rec.type]
        if cb in (6, 7) and rec.type not in (3, 5) or (rec.type == 5 and cb in (6, 7) and rec.message is None):
            raise ApiError(400, 50035, "Interaction callback type not valid for this interaction",
                           violation=f"{where}: callback type {cb} is not valid for a {kind} interaction")
        if cb == 8 and rec.type != 4 or rec.type == 4 and cb != 8:
            raise ApiError(400, 50035, "Invalid interaction callback type",
                           violation=f"{where}: callback type {cb} for a {kind} interaction")
        if cb == 9 and rec.type == 5:
            raise ApiError(400, 50035, "Cannot respond to a modal submit with a modal",
                           violation=f"{where}: modal in response to a modal submit")
        if cb == 1:
            raise ApiError(400, 50035, "Invalid interaction callback type",
                           violation=f"{where}: PONG (type 1) is only valid for PING interactions")
        if cb not in (4, 5, 6, 7, 8, 9, 12):
            raise ApiError(400, 50035, f"Invalid interaction callback type {cb}", violation=f"{where}: type {cb}")

        message: Optional[Message] = None
        if cb == 4:
            self._validate(data, files, partial=False, where=where)
            message = self._new_message(rec.channel, self.bot_user, data, files,
                                        ephemeral_to=rec.user.id if flags & FLAG_EPHEMERAL else None, webhook=True,
                                        interaction=self._interaction_meta(rec),
                                        msg_type=self._response_type(rec))
        elif cb == 5:
            message = self._new_message(rec.channel, self.bot_user, {}, [],
                                        ephemeral_to=rec.user.id if flags & FLAG_EPHEMERAL else None, webhook=True,
                                        interaction=self._interaction_meta(rec),
                                        msg_type=self._response_type(rec), extra_flags=FLAG_LOADING)
        elif cb == 7:
            m = rec.message
            assert m is not None, "checked above: a component or modal-from-a-message interaction has its message"
            if m.deleted:
                raise ApiError(404, 10008, "Unknown Message")
            self._validate(data, files, partial=True, where=where, flags=data.get("flags", m.flags), message=m)
            self._apply_edit(m, data, files, where=f"{where} (type 7)", route="callback")
            self._dispatch_message("MESSAGE_UPDATE", m)
            message = m
        elif cb == 9:
            problems = validation.check_modal(data)
            if problems:
                for p in problems:
                    self.violation(f"{where} modal: {p}")
                raise ApiError(400, 50035, "Invalid Form Body")
            rec.modal = data
        elif cb == 8:
            choices = data.get("choices") or []
            if len(choices) > 25:
                raise ApiError(400, 50035, "Invalid Form Body", violation=f"{where}: more than 25 autocomplete choices")
            rec.choices = choices

        if message is not None:
            message.tokens.add(rec.token)
        rec.ack_type = cb
        rec.ack_flags = flags
        if rec.message is not None:
            rec.edit_count_at_ack = rec.message.edit_count
        rec.ack_time = loop.time()
        if cb in (4, 5):
            rec.response_message = message
            rec.original = message
        elif cb in (6, 7):
            rec.response_message = rec.message
            rec.original = rec.message
        if message is not None and cb in (4, 5):
            self._dispatch_message("MESSAGE_CREATE", message)
        if not rec.ack_future.done():
            rec.ack_future.set_result(cb)
        rec.touch()

        if request.query.get("with_response") not in ("1", "true", "True"):
            return _empty()
        it: Dict[str, Any] = {"id": str(rec.id), "type": rec.type}
        if message is not None and cb in (4, 5, 7):
            it["response_message_id"] = str(message.id)
            it["response_message_loading"] = cb == 5
            it["response_message_ephemeral"] = message.ephemeral
        out: Dict[str, Any] = {"interaction": it}
        if cb in (4, 5, 7) and message is not None:
            out["resource"] = {"type": cb, "message": self._message_payload(message)}
        elif cb != 6:
            out["resource"] = {"type": cb}
        return _json_response(out)

    @staticmethod
    def _response_type(rec: _Interaction) -> int:
        """Message type of an interaction response: 20 slash command, 23 context menu, 0 otherwise."""
        if rec.type == 2:
            return 23 if rec.data.get("type") in (2, 3) else 20
        return 0

    def _interaction_meta(self, rec: _Interaction, **extra: Any) -> Dict[str, Any]:
        meta = {"id": rec.id, "type": rec.type, "user_id": rec.user.id, "token": rec.token}
        if rec.type == 2:
            meta["name"] = rec.name.lstrip("/")
        if rec.message is not None:
            meta["interacted_message_id"] = rec.message.id
        meta.update(extra)
        return meta

    # ------------------------------------------------------------------ webhooks (followups)
    def _webhook_interaction(self, app_id: str, token: str) -> _Interaction:
        if int(app_id) != self.application_id:
            raise ApiError(404, 10015, "Unknown Webhook")
        rec = self._by_token.get(token)
        if rec is None or asyncio.get_running_loop().time() - rec.dispatched_at + rec.aged > self.token_lifetime:
            raise ApiError(401, 50027, "Invalid Webhook Token")  # (Discord's answer to an expired token too)
        if rec.ack_type is None:
            raise ApiError(404, 10015, "Unknown Webhook",
                           violation=f"followup/edit through the token of {rec.describe()} before it was acknowledged")
        if rec.channel.deleted:
            # Discord only answers 404; a bot that goes on using the token once told of the
            # deletion is at fault, not one whose request was on its way when it happened
            told = rec.channel.deleted_at is None or (
                asyncio.get_running_loop().time() - rec.channel.deleted_at > DELETION_NEWS)
            raise ApiError(404, 10003, "Unknown Channel",
                           violation=f"followup/edit for {rec.describe()} in deleted channel #{rec.channel.name}"
                           if told else None)
        return rec

    def _webhook_message(self, rec: _Interaction, mid: str) -> Message:
        if mid == "@original":
            m = rec.original
            if m is None or m.deleted:
                raise ApiError(404, 10008, "Unknown Message")
            return m
        try:
            m = self._messages.get(int(mid))
        except ValueError:
            m = None
        if m is None or m.deleted or m.webhook_id != self.application_id:
            raise ApiError(404, 10008, "Unknown Message")
        if m.ephemeral_to is not None:
            if m.ephemeral_to != rec.user.id:
                raise ApiError(404, 10008, "Unknown Message",
                               violation=f"ephemeral message {m.id} of user {self.users[m.ephemeral_to].name} accessed "
                                         f"through the interaction of {rec.user.name} ({rec.describe()})")
            if rec.token not in m.tokens:
                raise ApiError(404, 10008, "Unknown Message",
                               violation=f"ephemeral message {m.id} accessed through the token of an unrelated "
                                         f"interaction ({rec.describe()})")
        return m

    async def _r_webhook_execute(self, request: web.Request, app_id: str, token: str, *, body: Any, files: Any) -> web.Response:
        rec = self._webhook_interaction(app_id, token)
        payload = body or {}
        where = f"followup to {rec.describe()}"
        self._validate(payload, files, partial=False, where=where)
        flags = int(payload.get("flags") or 0)
        target = rec.channel
        if request.query.get("thread_id"):
            target = self._channel(request.query["thread_id"], for_send=True, what="followup sent to")
        if files and not flags & FLAG_EPHEMERAL and target.guild_id:
            # Discord (since July 2022): a bot answering an interaction has its own permissions in
            # the channel, overrides included: a public followup's files need Attach Files
            self._require(target, ATTACH_FILES, "attach files")
        rec.touch()
        if rec.ack_type == 5 and rec.response_message is not None and rec.response_message.loading \
                and not rec.original_replaced and not rec.response_message.deleted:
            # Discord: the first followup after a deferred reply replaces the "thinking..." message and keeps the
            # deferral's ephemerality
            m = rec.response_message
            if flags & FLAG_EPHEMERAL and not m.ephemeral:
                self.violation(f"{where}: ephemeral followup after a public defer is shown PUBLICLY "
                               f"(it replaces the deferred message) - defer(ephemeral=True) instead")
            rec.original_replaced = True
            # it is technically an edit of the "thinking" message: its mentions do not notify either
            self._apply_edit(m, payload, files, where=f"{where}, which replaced the deferred 'thinking' message", route="webhook",
                             loading_fill=True)
            self._dispatch_message("MESSAGE_UPDATE", m)
            rec.followups.append(m)
            rec.touch()
            return _json_response(self._message_payload(m))
        m = self._new_message(target, self.bot_user, payload, files,
                              ephemeral_to=rec.user.id if flags & FLAG_EPHEMERAL else None, webhook=True,
                              interaction=self._interaction_meta(
                                  rec, original_response_message_id=rec.original.id if rec.original else None))
        m.tokens.add(rec.token)
        rec.followups.append(m)
        self._dispatch_message("MESSAGE_CREATE", m)
        rec.touch()
        if request.query.get("wait") in ("true", "1", "True"):
            return _json_response(self._message_payload(m))
        return _empty()

    async def _r_webhook_get(self, request: web.Request, app_id: str, token: str, mid: str, *, body: Any, files: Any) -> web.Response:
        rec = self._webhook_interaction(app_id, token)
        return _json_response(self._message_payload(self._webhook_message(rec, mid)))

    async def _r_webhook_edit(self, request: web.Request, app_id: str, token: str, mid: str, *, body: Any, files: Any) -> web.Response:
        rec = self._webhook_interaction(app_id, token)
        m = self._webhook_message(rec, mid)
        payload = body or {}
        ch = self.channels[m.channel_id]
        if m.ephemeral_to is None:
            self._ensure_writable_thread(ch, edit=True)
        where = f"edit of {'@original' if mid == '@original' else 'message ' + mid} of {rec.describe()}"
        self._validate(payload, files, partial=True, where=where, flags=payload.get("flags", m.flags), message=m)
        self._apply_edit(m, payload, files, where=where, route="webhook", loading_fill=m.loading)
        rec.edits += 1
        if rec.first_edit_at is None:
            rec.first_edit_at = asyncio.get_running_loop().time()
        self._dispatch_message("MESSAGE_UPDATE", m)
        rec.touch()
        return _json_response(self._message_payload(m))

    async def _r_webhook_delete(self, request: web.Request, app_id: str, token: str, mid: str, *, body: Any, files: Any) -> web.Response:
        rec = self._webhook_interaction(app_id, token)
        m = self._webhook_message(rec, mid)
        self._delete_message(m)
        rec.edits += 1
        rec.touch()
        return _empty()


class _Drop(Exception):
    """Injected failure: close the connection without answering."""


class _Raw429(ApiError):
    def __init__(self, body: Dict[str, Any], headers: Dict[str, str]) -> None:
        super().__init__(429, 0, body.get("message", "You are being rate limited."), headers=headers)
        self.body = body
