"""Game nights, apart from Discord and storage: who sits where, points,
standings and highlights.  Pure functions over plain data; the orchestration
(tables, saving) lives in :mod:`app.nights.host`.

A night is a series of rounds; in each round the signed-up players play one
game at several tables at once.  A finish gives points by place: at a table
of ``n`` seats the winner gets ``n`` points, second ``n - 1``... last 1; tied
seats share the points of the places they cover (two tied for 2nd at a table
of 4 get (3 + 2) / 2 = 2.5 each).

    >>> table_sizes(11, 4)
    [4, 4, 3]
    >>> place_points([1, 2, 2, 4])
    [4.0, 2.5, 2.5, 1.0]
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from core import registry

SIGNUP, PLAYING, ENDED = "signup", "playing", "ended"


class NightError(Exception):
    """A refusal; ``code`` keys the message ``nights.error_<code>``."""

    def __init__(self, code: str, **params: Any) -> None:
        super().__init__(code)
        self.code = code
        self.params = params


@dataclass
class Player:
    """Someone signed up for the night (people only; computers fill tables)."""

    user_id: int
    name: str
    left: bool = False
    #: left by stepping away from a table of the night (``/leave`` there):
    #: *I'm back* at that table signs them up again
    away: bool = False
    #: the table whose step away the night followed last (None once back, or
    #: off the night by *Leave*); a restart compares it with the seats
    #: (:meth:`NightHost.follow_seats`)
    stepped_at: int | None = None

    def step(self, table_id: int, away: bool) -> None:
        """Off the night by stepping away from ``table_id``, or on it again
        by *I'm back* there."""
        self.left = self.away = away
        self.stepped_at = table_id if away else None

    def to_dict(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "name": self.name, "left": self.left, **({"away": True} if self.away else {}),
                **({"stepped_at": self.stepped_at} if self.stepped_at is not None else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Player":
        stepped_at = data.get("stepped_at")
        return cls(int(data["user_id"]), str(data["name"]), bool(data.get("left")), bool(data.get("away")),
                   int(stepped_at) if stepped_at is not None else None)


@dataclass
class NightTable:
    """One table of one round.  ``seats``: user ids in seat order, None for a
    computer.  ``places`` per seat once the game is over; a closed table
    (cancelled, everyone left) has none and gives no points."""

    table_id: int
    round: int
    number: int
    seats: list[int | None]
    status: str = "playing"  # playing | done | closed
    places: list[int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"table_id": self.table_id, "round": self.round, "number": self.number,
                "seats": self.seats, "status": self.status, "places": self.places}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "NightTable":
        return cls(int(data["table_id"]), int(data["round"]), int(data["number"]),
                   [None if s is None else int(s) for s in data["seats"]], str(data.get("status", "playing")),
                   None if data.get("places") is None else [int(p) for p in data["places"]])


@dataclass
class Missed:
    """Why a night's first round did not start at its time (the refusal's ``code`` and
    ``params``, as :class:`NightError` gave them), kept with the night until the
    organiser is told: a restart meanwhile still tells them.  ``at`` (when it was
    missed, in whole seconds) names the note to Discord, so every try of it, after a
    restart too, posts it once."""

    code: str
    params: dict[str, Any]
    at: int

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "params": self.params, "at": self.at}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Missed":
        return cls(str(data["code"]), dict(data.get("params") or {}), int(data["at"]))


@dataclass
class Night:
    id: int
    guild_id: int
    channel_id: int
    game: str
    organiser_id: int
    table_size: int
    rounds: int | None = None  # None: until the organiser ends it
    turn_time: int = 120
    locale: str = "en"
    fill: bool = False  # computers fill every table to table_size
    level: str = "normal"  # the level of those computers (where the game has levels)
    status: str = SIGNUP  # signup (also between rounds) | playing | ended
    round: int = 0  # the round in progress, or the last one played
    players: list[Player] = field(default_factory=list)
    tables: list[NightTable] = field(default_factory=list)
    messages: dict[str, int] = field(default_factory=dict)  # signup, standings, recap
    created_at: float = 0.0
    ended_at: float | None = None
    recap_due: bool = False  # ended, its recap not posted yet (saved with the end: a restart posts it)
    auto: bool = False  # each next round starts by itself after a break (the organiser starts the first)
    next_at: float | None = None  # when the next round starts by itself (saved: a restart keeps the time)
    #: the night in the server's calendar: its Discord Scheduled Event, and what Discord was
    #: last told of it (status "scheduled"/"active"/"completed"/"canceled", start time)
    event_id: int | None = None
    event_status: str | None = None
    event_start: float | None = None
    #: who asked for a reminder before the first round: *Remind me* on the sign-up, and
    #: *Interested* on the event in Discord; the role the organiser chose to ping with it
    remind: list[int] = field(default_factory=list)
    interested: list[int] = field(default_factory=list)
    remind_role: int | None = None
    reminded: bool = False  # the reminder went out (saved: a restart does not send it again)
    #: who watches the night (*Watch* on its standings): every live table, round after round
    watchers: dict[int, str] = field(default_factory=dict)
    variant: str | None = None  # the table variant every table of the night plays (None: the standard game)
    missed: Missed | None = None  # the first round did not start at its time; the organiser is not told yet

    def player(self, user_id: int) -> Player | None:
        for player in self.players:
            if player.user_id == user_id:
                return player
        return None

    def active(self) -> list[Player]:
        return [p for p in self.players if not p.left]

    def current_tables(self) -> list[NightTable]:
        return [nt for nt in self.tables if nt.round == self.round]

    def playing_tables(self) -> list[NightTable]:
        return [nt for nt in self.current_tables() if nt.status == "playing"]

    def table(self, table_id: int) -> NightTable | None:
        for nt in self.tables:
            if nt.table_id == table_id:
                return nt
        return None

    def names(self) -> dict[int, str]:
        return {p.user_id: p.name for p in self.players}

    def meta(self) -> dict[str, Any]:
        return {
            "organiser_id": self.organiser_id, "table_size": self.table_size, "rounds": self.rounds,
            "turn_time": self.turn_time, "locale": self.locale, "fill": self.fill, "level": self.level,
            "round": self.round,
            "players": [p.to_dict() for p in self.players], "tables": [nt.to_dict() for nt in self.tables],
            "messages": self.messages, "created_at": self.created_at, "ended_at": self.ended_at,
            **({"recap_due": True} if self.recap_due else {}),
            **({"auto": True} if self.auto else {}),
            **({"next_at": self.next_at} if self.next_at is not None else {}),
            **({"event_id": self.event_id, "event_status": self.event_status, "event_start": self.event_start}
               if self.event_id is not None else {}),
            **({"remind": self.remind} if self.remind else {}),
            **({"interested": self.interested} if self.interested else {}),
            **({"remind_role": self.remind_role} if self.remind_role is not None else {}),
            **({"reminded": True} if self.reminded else {}),
            **({"watchers": [[u, n] for u, n in self.watchers.items()]} if self.watchers else {}),
            **({"variant": self.variant} if self.variant else {}),
            **({"missed": self.missed.to_dict()} if self.missed is not None else {}),
        }

    @classmethod
    def from_record(cls, id: int, guild_id: int, channel_id: int, game: str, status: str,
                    meta: Mapping[str, Any]) -> "Night":
        return cls(
            id=id, guild_id=guild_id, channel_id=channel_id, game=game, status=status,
            organiser_id=int(meta["organiser_id"]), table_size=int(meta["table_size"]),
            rounds=meta.get("rounds"), turn_time=int(meta.get("turn_time", 120)),
            locale=meta.get("locale", "en"), fill=bool(meta.get("fill")),
            level=str(meta.get("level", "normal")), round=int(meta.get("round", 0)),
            players=[Player.from_dict(p) for p in meta.get("players", [])],
            tables=[NightTable.from_dict(nt) for nt in meta.get("tables", [])],
            messages={k: int(v) for k, v in meta.get("messages", {}).items()},
            created_at=float(meta.get("created_at", 0.0)), ended_at=meta.get("ended_at"),
            recap_due=bool(meta.get("recap_due")), auto=bool(meta.get("auto")),
            next_at=None if meta.get("next_at") is None else float(meta["next_at"]),
            event_id=None if meta.get("event_id") is None else int(meta["event_id"]),
            event_status=meta.get("event_status"),
            event_start=None if meta.get("event_start") is None else float(meta["event_start"]),
            remind=[int(u) for u in meta.get("remind", [])],
            interested=[int(u) for u in meta.get("interested", [])],
            remind_role=None if meta.get("remind_role") is None else int(meta["remind_role"]),
            reminded=bool(meta.get("reminded")),
            watchers={int(u): str(n) for u, n in meta.get("watchers", ())},
            variant=meta.get("variant"),
            missed=None if meta.get("missed") is None else Missed.from_dict(meta["missed"]),
        )

    def first_start(self) -> float | None:
        """When the first round starts by itself (None: the organiser starts it, or it started)."""
        return self.next_at if self.round == 0 and self.status == SIGNUP else None

    def to_remind(self) -> list[int]:
        """Whom the reminder is for: *Remind me* and *Interested*, each once, in that order."""
        return list(dict.fromkeys(self.remind + self.interested))


# --------------------------------------------------------------------- seating
def table_sizes(n: int, size: int, min_seats: int = 2, max_seats: int = 7) -> list[int]:
    """Split ``n`` players into tables of at most ``size``, as even as
    possible, none smaller than the game allows (and never a table of one).

    >>> table_sizes(11, 4), table_sizes(12, 4), table_sizes(5, 4), table_sizes(9, 7)
    ([4, 4, 3], [4, 4, 4], [3, 2], [5, 4])
    >>> table_sizes(5, 2, 2, 6)
    [3, 2]
    """
    low = max(2, min_seats)
    size = max(low, min(size, max_seats))
    if n < low:
        raise NightError("too_few", min=low)
    k = math.ceil(n / size)
    while k > 1 and n // k < low:
        k -= 1
    base, extra = divmod(n, k)
    sizes = [base + 1] * extra + [base] * (k - extra)
    if sizes[0] > max_seats:  # only possible for odd game limits; never seat more than allowed
        raise NightError("bad_size", min=low, max=max_seats)
    return sizes


def snake(order: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    """Deal ``order`` (best first) to tables back and forth (1, 2, 3, 3, 2, 1,
    1...), skipping full tables, so every table gets a share of the strong
    and the weak players.

    >>> snake([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [4, 4, 3])
    [[1, 6, 7, 11], [2, 5, 8, 10], [3, 4, 9]]
    """
    tables: list[list[int]] = [[] for _ in sizes]
    forward = list(range(len(sizes)))
    passes = [forward, forward[::-1]]
    items = list(order)
    turn = 0
    while items:
        for t in passes[turn % 2]:
            if items and len(tables[t]) < sizes[t]:
                tables[t].append(items.pop(0))
        turn += 1
    return tables


def balance(tables: list[list[int]], ratings: Mapping[int, float], steps: int = 500) -> list[list[int]]:
    """Improve a seating by swapping two players of different tables while
    that narrows the gap between the highest and the lowest table average
    (only swaps with the highest or the lowest table can).  Sizes stay.

    >>> balance([[1, 2], [3, 4]], {1: 9, 2: 8, 3: 2, 4: 1})
    [[3, 2], [1, 4]]
    """
    tables = [list(t) for t in tables]
    if len(tables) < 2:
        return tables
    r = {u: float(ratings.get(u, 0.0)) for t in tables for u in t}
    sizes = [len(t) for t in tables]
    sums = [sum(r[u] for u in t) for t in tables]
    live = [i for i in range(len(tables)) if sizes[i]]
    for _ in range(steps):
        avgs = {i: sums[i] / sizes[i] for i in live}
        ranked = sorted(live, key=lambda i: avgs[i])
        lo, hi = ranked[0], ranked[-1]
        current = avgs[hi] - avgs[lo]
        best: tuple[float, int, int, int, int] | None = None
        for a in (hi, lo):
            for b in live:
                if b == a:
                    continue
                # the extremes of the tables a swap between a and b leaves alone
                rest_hi = next((avgs[i] for i in reversed(ranked) if i not in (a, b)), None)
                rest_lo = next((avgs[i] for i in ranked if i not in (a, b)), None)
                for i, u in enumerate(tables[a]):
                    for j, v in enumerate(tables[b]):
                        d = r[v] - r[u]
                        if not d:
                            continue
                        na, nb = (sums[a] + d) / sizes[a], (sums[b] - d) / sizes[b]
                        top = max(na, nb) if rest_hi is None else max(na, nb, rest_hi)
                        bottom = min(na, nb) if rest_lo is None else min(na, nb, rest_lo)
                        g = top - bottom
                        if g < current - 1e-9 and (best is None or g < best[0]):
                            best = (g, a, i, b, j)
        if best is None:
            break
        _, a, i, b, j = best
        u, v = tables[a][i], tables[b][j]
        tables[a][i], tables[b][j] = v, u
        sums[a] += r[v] - r[u]
        sums[b] -= r[v] - r[u]
    return tables


def groups(order: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    """Players next to each other in ``order`` sit together (later rounds:
    the leaders meet the leaders).

    >>> groups([1, 2, 3, 4, 5, 6, 7], [4, 3])
    [[1, 2, 3, 4], [5, 6, 7]]
    """
    out, start = [], 0
    for size in sizes:
        out.append(list(order[start:start + size]))
        start += size
    return out


def seat_round(night: Night, ratings: Mapping[int, float], min_seats: int, max_seats: int) -> list[list[int | None]]:
    """The tables of the next round: user ids per table in seat order, None
    for a computer player.  Round 1 seats by rating (snake order, then swaps
    that even out the tables' average ratings: :func:`balance`), later rounds by
    night standings (groups); players who left are not seated; computers
    only when the organiser asked for them (``night.fill``)."""
    people = [p.user_id for p in night.active()]
    if night.round == 0:
        order = sorted(people, key=lambda u: (-ratings.get(u, 0.0), u))
        seat = snake
    else:
        rank = {row.user_id: i for i, row in enumerate(standings(night))}
        order = sorted(people, key=lambda u: (rank.get(u, len(rank)), -ratings.get(u, 0.0), u))
        seat = groups
    size = max(max(2, min_seats), min(night.table_size, max_seats))
    if night.fill and people:
        k = math.ceil(len(people) / size)
        base, extra = divmod(len(people), k)
        sizes = [base + 1] * extra + [base] * (k - extra)
    else:
        sizes = table_sizes(len(people), size, min_seats, max_seats)
    seated = seat(order, sizes)
    if night.round == 0:  # snake, then a few swaps that bring the averages closer
        seated = balance(seated, ratings)
    tables: list[list[int | None]] = [list(t) for t in seated]
    if night.fill:
        for t in tables:
            t.extend([None] * (size - len(t)))
    if not tables:
        raise NightError("too_few", min=max(2, min_seats))
    return tables


def spread(tables: Iterable[Sequence[int | None]], ratings: Mapping[int, float]) -> float:
    """Highest minus lowest average rating of the tables' people.

    >>> spread([[1, 4], [2, 3]], {1: 10, 2: 8, 3: 6, 4: 4})
    0.0
    """
    averages = []
    for t in tables:
        people = [u for u in t if u is not None]
        if people:
            averages.append(sum(ratings.get(u, 0.0) for u in people) / len(people))
    return max(averages) - min(averages) if averages else 0.0


# ---------------------------------------------------------------------- points
def place_points(places: Sequence[int]) -> list[float]:
    """Points per seat from finish places (competition ranking, "1224").

    >>> place_points([2, 1, 3]), place_points([1, 1, 3]), place_points([1, 1])
    ([2.0, 3.0, 1.0], [2.5, 2.5, 1.0], [1.5, 1.5])
    """
    n = len(places)
    return [float(n - p + 1 - Fraction(places.count(p) - 1, 2)) for p in places]


@dataclass(frozen=True)
class Standing:
    rank: int
    user_id: int
    name: str
    points: float
    wins: int
    games: int
    left: bool


def standings(night: Night) -> list[Standing]:
    """Everyone who played at least one finished table, best first: more
    points, then more wins, then fewer games; equal on all three share a
    rank.  (People who signed up but have not finished a game yet are not
    listed.)"""
    points: dict[int, float] = {}
    wins: dict[int, int] = {}
    games: dict[int, int] = {}
    for nt in night.tables:
        if nt.status != "done" or nt.places is None:
            continue
        for seat, (user, pts) in enumerate(zip(nt.seats, place_points(nt.places))):
            if user is None:
                continue
            points[user] = points.get(user, 0.0) + pts
            wins[user] = wins.get(user, 0) + (nt.places[seat] == 1)
            games[user] = games.get(user, 0) + 1
    names = night.names()
    left = {p.user_id for p in night.players if p.left}

    def key(u: int) -> tuple[float, int, int]:
        return (-points[u], -wins[u], games[u])

    order = sorted(points, key=lambda u: (*key(u), names.get(u, "").lower(), u))
    out = []
    for u in order:
        rank = 1 + sum(1 for o in order if key(o) < key(u))
        out.append(Standing(rank, u, names.get(u, "?"), points[u], wins[u], games[u], u in left))
    return out


# ------------------------------------------------------------------ highlights
@dataclass(frozen=True)
class GameEvents:
    """What one finished table of the night did: its seats' names and every
    event of its game in order (replayed from the saved log); ``game``: its key."""

    round: int
    number: int
    names: list[str]
    events: list[dict[str, Any]]
    game: str


def highlights(games: Iterable[GameEvents]) -> list[dict[str, Any]]:
    """A few memorable moments: each game finds its own in its events
    (:attr:`core.spec.GameSpec.moments`; a game that declares none adds
    nothing), and the record of each kind is kept, in the order the games
    declare them (:attr:`core.spec.GameSpec.highlights`).

    Each is ``{"kind", "name", "value", "round", "table"}``; the first game
    to reach the record keeps it.

    >>> spec = next(s for s in registry.GAMES if s.moments)
    >>> events = [{"type": "no such event"}]
    >>> highlights([GameEvents(1, 2, ["ann", "bo"], events, spec.key)])
    []
    """
    best: dict[str, dict[str, Any]] = {}
    for game in games:
        spec = registry.spec(game.game)
        if spec.moments is None:
            continue
        for moment in spec.moments(game.events, len(game.names)):
            if not 0 <= moment.seat < len(game.names):
                continue
            old = best.get(moment.kind)
            if old is None or (moment.value < old["value"] if moment.lower else moment.value > old["value"]):
                best[moment.kind] = {"kind": moment.kind, "name": game.names[moment.seat], "value": moment.value,
                                     "round": game.round, "table": game.number}
    order = [kind for spec in registry.GAMES for kind in spec.highlights]
    return [best[k] for k in order if k in best]
