"""Plain data objects of the Discord stand-in (users, guilds, channels, messages)."""
from __future__ import annotations

import asyncio
import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional

DISCORD_EPOCH_MS = 1420070400000
MENTION_RE = re.compile(r"<@!?(\d+)>")

# message flags
FLAG_SUPPRESS_EMBEDS = 1 << 2
FLAG_EPHEMERAL = 1 << 6
FLAG_LOADING = 1 << 7
FLAG_SUPPRESS_NOTIFICATIONS = 1 << 12
FLAG_COMPONENTS_V2 = 1 << 15
FLAG_HAS_THREAD = 1 << 5


def iso(ts: Optional[_dt.datetime] = None) -> str:
    return (ts or _dt.datetime.now(_dt.timezone.utc)).isoformat()


def snowflake_time(sid: int) -> _dt.datetime:
    ms = (sid >> 22) + DISCORD_EPOCH_MS
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)


@dataclass(eq=False)
class User:
    id: int
    name: str
    locale: str = "en-US"
    bot: bool = False
    global_name: Optional[str] = None
    dms_open: bool = True

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"

    def payload(self) -> Dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.name,
            "discriminator": "0",
            "global_name": self.global_name if self.global_name is not None else (None if self.bot else self.name),
            "avatar": None,
            "avatar_decoration_data": None,
            "banner": None,
            "accent_color": None,
            "bot": self.bot,
            "system": False,
            "public_flags": 0,
            "flags": 0,
            "primary_guild": None,
            "collectibles": None,
        }

    def __repr__(self) -> str:
        return f"<User {self.name} id={self.id}>"


@dataclass(eq=False)
class Role:
    id: int
    guild_id: int
    name: str
    permissions: int
    position: int = 0
    managed: bool = False
    bot_id: Optional[int] = None
    #: anyone may ping it (else only who may mention everyone: Mention @everyone, @here and All Roles)
    mentionable: bool = False

    @property
    def mention(self) -> str:
        return f"<@&{self.id}>"

    def payload(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {
            "id": str(self.id),
            "name": self.name,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "icon": None,
            "unicode_emoji": None,
            "position": self.position,
            "permissions": str(self.permissions),
            "managed": self.managed,
            "mentionable": self.mentionable,
            "flags": 0,
        }
        if self.bot_id is not None:
            d["tags"] = {"bot_id": str(self.bot_id)}
        return d

    def __repr__(self) -> str:
        return f"<Role {self.name} id={self.id}>"


@dataclass(eq=False)
class Member:
    user: User
    guild_id: int
    roles: List[int] = field(default_factory=list)
    joined_at: str = field(default_factory=iso)
    nick: Optional[str] = None

    def payload(self, *, with_user: bool = True, permissions: Optional[int] = None) -> Dict[str, Any]:
        d: Dict[str, Any] = {
            "roles": [str(r) for r in self.roles],
            "nick": self.nick,
            "avatar": None,
            "banner": None,
            "joined_at": self.joined_at,
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }
        if with_user:
            d["user"] = self.user.payload()
        if permissions is not None:
            d["permissions"] = str(permissions)
        return d


@dataclass(eq=False)
class Channel:
    id: int
    type: int
    name: str
    guild_id: Optional[int] = None
    parent_id: Optional[int] = None
    position: int = 0
    topic: Optional[str] = None
    # target id -> (type 0 role / 1 member, allow, deny)
    overwrites: Dict[int, tuple] = field(default_factory=dict)
    deleted: bool = False
    deleted_at: Optional[float] = None  # the stand-in's loop time of the deletion
    last_message_id: Optional[int] = None
    # thread fields
    owner_id: Optional[int] = None
    archived: bool = False
    locked: bool = False
    invitable: bool = True
    auto_archive_duration: int = 1440
    archive_timestamp: str = field(default_factory=iso)
    create_timestamp: str = field(default_factory=iso)
    message_count: int = 0
    total_message_sent: int = 0
    thread_members: Dict[int, str] = field(default_factory=dict)
    starter_message_id: Optional[int] = None
    # DM
    recipient: Optional[User] = None

    @property
    def is_thread(self) -> bool:
        return self.type in (10, 11, 12)

    @property
    def mention(self) -> str:
        return f"<#{self.id}>"

    def payload(self) -> Dict[str, Any]:
        if self.type == 1:
            return {
                "id": str(self.id),
                "type": 1,
                "last_message_id": str(self.last_message_id) if self.last_message_id else None,
                "recipients": [self.recipient.payload()] if self.recipient else [],
                "flags": 0,
            }
        d: Dict[str, Any] = {
            "id": str(self.id),
            "type": self.type,
            "guild_id": str(self.guild_id),
            "name": self.name,
            "parent_id": str(self.parent_id) if self.parent_id else None,
            "last_message_id": str(self.last_message_id) if self.last_message_id else None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }
        if self.is_thread:
            d.update(
                owner_id=str(self.owner_id),
                message_count=self.message_count,
                member_count=len(self.thread_members),
                total_message_sent=self.total_message_sent,
                member_ids_preview=[str(u) for u in list(self.thread_members)[:8]],
                thread_metadata={
                    "archived": self.archived,
                    "auto_archive_duration": self.auto_archive_duration,
                    "archive_timestamp": self.archive_timestamp,
                    "locked": self.locked,
                    "invitable": self.invitable,
                    "create_timestamp": self.create_timestamp,
                },
                applied_tags=[],
            )
        else:
            if self.type in (2, 13):  # voice and stage channels
                d.update(bitrate=64000, user_limit=0, rtc_region=None, video_quality_mode=1)
            d.update(
                position=self.position,
                topic=self.topic,
                nsfw=False,
                permission_overwrites=[
                    {"id": str(t), "type": ty, "allow": str(a), "deny": str(de)}
                    for t, (ty, a, de) in self.overwrites.items()
                ],
                default_auto_archive_duration=1440,
                default_thread_rate_limit_per_user=0,
            )
        return d

    def __repr__(self) -> str:
        kind = {0: "text", 1: "dm", 2: "voice", 11: "thread", 12: "private-thread", 10: "news-thread"}.get(self.type, str(self.type))
        return f"<Channel #{self.name} {kind} id={self.id}{' deleted' if self.deleted else ''}>"


@dataclass(eq=False)
class Guild:
    id: int
    name: str
    locale: str
    owner_id: int
    roles: Dict[int, Role] = field(default_factory=dict)
    channels: Dict[int, Channel] = field(default_factory=dict)  # includes threads
    members: Dict[int, Member] = field(default_factory=dict)
    joined_at: str = field(default_factory=iso)
    bot_role_id: Optional[int] = None
    voice: Dict[int, int] = field(default_factory=dict)  # user id -> voice channel id
    #: Guild Scheduled Events by id (the API's object, as Discord returns it)
    scheduled_events: Dict[int, Dict[str, Any]] = field(default_factory=dict)
    #: event id -> the ids of the users interested in it ("Interested" in the client), in order
    event_users: Dict[int, List[int]] = field(default_factory=dict)

    @property
    def everyone(self) -> Role:
        return self.roles[self.id]

    @property
    def bot_role(self) -> Optional[Role]:
        return self.roles.get(self.bot_role_id) if self.bot_role_id else None

    def __repr__(self) -> str:
        return f"<Guild {self.name} id={self.id}>"


def walk_components(components: Any) -> Iterator[Dict[str, Any]]:
    """Every component dict of a (v1 or v2) component tree, parents before children, a
    section's texts before its accessory: the order in which Discord numbers components."""
    if not isinstance(components, list):
        return
    for c in components:
        if not isinstance(c, dict):
            continue
        yield c
        if isinstance(c.get("components"), list):
            yield from walk_components(c["components"])
        if isinstance(c.get("accessory"), dict):
            yield from walk_components([c["accessory"]])
        if isinstance(c.get("component"), dict):
            yield from walk_components([c["component"]])


def embed_text(embed: Dict[str, Any]) -> List[str]:
    parts: List[str] = []
    if not isinstance(embed, dict):
        return parts
    author = embed.get("author") or {}
    if author.get("name"):
        parts.append(str(author["name"]))
    for key in ("title", "description"):
        if embed.get(key):
            parts.append(str(embed[key]))
    for f in embed.get("fields") or []:
        if isinstance(f, dict):
            parts.extend(str(f.get(k)) for k in ("name", "value") if f.get(k))
    footer = embed.get("footer") or {}
    if footer.get("text"):
        parts.append(str(footer["text"]))
    return parts


@dataclass(eq=False)
class Message:
    id: int
    channel_id: int
    author: User
    content: str = ""
    embeds: List[Dict[str, Any]] = field(default_factory=list)
    components: List[Dict[str, Any]] = field(default_factory=list)
    attachments: List[Dict[str, Any]] = field(default_factory=list)
    flags: int = 0
    type: int = 0
    guild_id: Optional[int] = None
    ephemeral_to: Optional[int] = None
    edit_count: int = 0
    deleted: bool = False
    webhook_id: Optional[int] = None
    application_id: Optional[int] = None
    interaction: Optional[Dict[str, Any]] = None  # {"id", "type", "user_id", "name", "token"}
    timestamp: str = field(default_factory=iso)
    edited_timestamp: Optional[str] = None
    message_reference: Optional[Dict[str, Any]] = None
    thread_id: Optional[int] = None
    reactions: Dict[str, set] = field(default_factory=dict)
    pinned: bool = False
    tts: bool = False
    # tokens of interactions allowed to edit this (ephemeral) message through a webhook route
    tokens: set = field(default_factory=set)
    # previous versions: list of dicts {content, embeds, components, attachments, flags}
    history: List[Dict[str, Any]] = field(default_factory=list)
    # users Discord notified when the message was created (mentions in the content that the
    # message's allowed_mentions let through; a reply's author when allowed); edits never add any
    pinged: List[int] = field(default_factory=list)
    allowed_mentions: Optional[Dict[str, Any]] = None
    # how each edit came, in order: "channel" (PATCH /channels/{id}/messages/{id}, counted by the global
    # limit and the channel's edit bucket), "callback" (an interaction answer of type 7), "webhook"
    # (PATCH /webhooks/{app}/{token}/messages/@original or /{id}: an interaction token, not counted)
    edited_by: List[str] = field(default_factory=list)
    _changed: Optional[asyncio.Event] = field(default=None, repr=False)

    # --- convenience -------------------------------------------------------
    @property
    def author_id(self) -> int:
        return self.author.id

    @property
    def ephemeral(self) -> bool:
        return self.ephemeral_to is not None

    @property
    def loading(self) -> bool:
        return bool(self.flags & FLAG_LOADING)

    @property
    def webhook(self) -> Optional[int]:
        return self.webhook_id

    def mention_text(self) -> str:
        """The text whose mentions count: the content, and with IS_COMPONENTS_V2 the text
        displays (they mention users and roles as content does; an embed's text never does)."""
        if not self.flags & FLAG_COMPONENTS_V2:
            return self.content or ""
        texts = [str(c["content"]) for c in walk_components(self.components)
                 if c.get("type") == 10 and c.get("content")]
        return "\n".join([self.content or "", *texts])

    @property
    def mentions(self) -> List[int]:
        out: List[int] = []
        for m in MENTION_RE.findall(self.mention_text()):
            if int(m) not in out:
                out.append(int(m))
        return out

    @property
    def created_at(self) -> _dt.datetime:
        return snowflake_time(self.id)

    def text(self) -> str:
        parts: List[str] = []
        if self.content:
            parts.append(self.content)
        for e in self.embeds:
            parts.extend(embed_text(e))
        for c in walk_components(self.components):
            if c.get("type") == 10 and c.get("content"):  # components v2 text display
                parts.append(str(c["content"]))
        return "\n".join(parts)

    def all_components(self) -> List[Dict[str, Any]]:
        return list(walk_components(self.components))

    def buttons(self) -> List[Dict[str, Any]]:
        out = []
        for c in walk_components(self.components):
            if c.get("type") == 2:
                emoji = c.get("emoji") or None
                out.append(
                    {
                        "label": c.get("label"),
                        "custom_id": c.get("custom_id"),
                        "disabled": bool(c.get("disabled", False)),
                        "style": c.get("style"),
                        "url": c.get("url"),
                        "emoji": emoji.get("name") if isinstance(emoji, dict) else emoji,
                        "raw": c,
                    }
                )
        return out

    def selects(self) -> List[Dict[str, Any]]:
        out = []
        for c in walk_components(self.components):
            if c.get("type") in (3, 5, 6, 7, 8):
                out.append(
                    {
                        "custom_id": c.get("custom_id"),
                        "type": c.get("type"),
                        "placeholder": c.get("placeholder"),
                        "options": list(c.get("options") or []),
                        "values": [o.get("value") for o in c.get("options") or []],
                        "min_values": c.get("min_values", 1),
                        "max_values": c.get("max_values", 1),
                        "disabled": bool(c.get("disabled", False)),
                        "raw": c,
                    }
                )
        return out

    def attachment_names(self) -> List[str]:
        return [a["filename"] for a in self.attachments]

    def snapshot(self) -> Dict[str, Any]:
        return {
            "content": self.content,
            "embeds": list(self.embeds),
            "components": list(self.components),
            "attachments": [a["filename"] for a in self.attachments],
            "flags": self.flags,
        }

    def _touch(self) -> None:
        if self._changed is not None:
            self._changed.set()

    def __repr__(self) -> str:
        c = (self.content or "")[:40]
        extra = f" ephemeral_to={self.ephemeral_to}" if self.ephemeral_to else ""
        return f"<Message id={self.id} ch={self.channel_id} by={self.author.name} {c!r}{extra}{' deleted' if self.deleted else ''}>"


class InteractionResult:
    """What the user saw after dispatching an interaction."""

    def __init__(self, record: "Any") -> None:
        self._record = record

    @property
    def interaction(self):
        return self._record

    @property
    def id(self) -> int:
        return self._record.id

    @property
    def ack_type(self) -> Optional[int]:
        return self._record.ack_type

    @property
    def latency(self) -> Optional[float]:
        return self._record.latency

    @property
    def message(self) -> Optional[Message]:
        return self._record.response_message

    @property
    def ephemeral(self) -> bool:
        """Whether the response (or, for 6/7, the message it updates) is visible only to the user."""
        m = self._record.response_message
        if m is not None:
            return m.ephemeral
        return bool(self._record.ack_flags & FLAG_EPHEMERAL)

    @property
    def followups(self) -> List[Message]:
        return list(self._record.followups)

    @property
    def modal(self) -> Optional[Dict[str, Any]]:
        return self._record.modal

    @property
    def choices(self) -> Optional[List[Dict[str, Any]]]:
        return self._record.choices

    @property
    def settled_now(self) -> bool:
        return self._record.is_settled()

    async def settled(self, timeout: float = 10) -> "InteractionResult":
        """Wait until a deferred response (5) was edited / followed up, or a deferred update (6) was followed by
        an edit or followup. Immediate for 4/7/9."""
        rec = self._record
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not rec.is_settled():
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(
                    f"interaction {rec.describe()} (ack type {rec.ack_type}) was not settled within {timeout}s: "
                    f"response message={rec.response_message!r}, followups={len(rec.followups)}, edits={rec.edits}"
                )
            rec.changed.clear()
            try:
                await asyncio.wait_for(rec.changed.wait(), timeout=min(left, 0.05))
            except asyncio.TimeoutError:
                pass
        return self

    def __repr__(self) -> str:
        return f"<InteractionResult {self._record.describe()} ack={self.ack_type} latency={self.latency} message={self.message!r}>"
