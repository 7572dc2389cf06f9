"""Time the image renderer: ms per image, cold (first call) and warm.

    .venv/bin/python bench/render.py            # timings
    .venv/bin/python bench/render.py --save DIR # also write the sample PNGs

Sample views follow the view specs in ``app/render/``; sample labels are
English stand-ins for the translation catalogue.

The ``*_played`` cases are redraws as a busy evening asks for them: each call
draws the next state of a game played by random moves (numbers change, the
player to move turns gold, stacks are taken), with the names of the next of
100 tables, so the caches of repeated text see what they would in the bot
(a warm "median" there is a redraw of a changed picture, not the same one).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.render import profile as render_profile
from cogs.games.garbage import render as render_garbage
from cogs.games.nimmt import render as render_nimmt

LABELS = {
    "round": "Round {round}/{rounds}", "draw_pile": "Draw pile: {count}", "supply": "Bull supply: {count}",
    "status_play": "{name} to move", "status_steal": "{name} takes a bull card from another player",
    "status_open": "{name} opens a new stack", "status_over": "Game over",
    "turn_stacks": "Stacks this turn: {played}/{max}", "no_stacks": "No stacks on the table",
    "played": "played", "hand": "Hand", "bulls": "Bulls", "score": "Score", "you": "(you)",
    "hand_title": "Your hand ({count})", "hand_empty": "No cards in hand", "fits": "on",
    "hand_no": "Hand {hand_no}", "decks": "Decks: {count}",
    "status_source": "{name}: draw from the stock or take the discard",
    "status_draw": "{name}: draw from the stock",
    "status_jack": "{name}: choose a slot for the Jack", "stock": "Stock: {count}",
    "discard": "Discard: {count}", "in_hand": "In hand", "slots": "Slots: {count}",
    "game_nimmt": "11 nimmt!", "game_garbage": "Garbage", "games": "Games", "wins": "Wins",
    "win_rate": "Win rate", "avg_penalty": "Penalty / round", "rounds_won": "Rounds won",
    "bulls_earned": "Bulls earned", "hands_won": "Hands won", "rating": "Rating",
    "rating_detail": "mu {mu} / sigma {sigma}", "rank": "Rank #{rank}", "unranked": "Unranked",
    "last_played": "{cards} on {label}", "last_took": "took stack {label} (cards: {count})", "last_bull": "a bull card",
    "last_bull_from": "a bull card from {victim}", "last_opened": "opened {label} with {card}",
    "last_passed": "ended the turn", "last_revealed": "new stacks: {stacks}",
    "round_start": "Round {round} starts: {name} begins", "new_stack": "new", "chain_slot": "→ {slot}",
    "chain_discard": "discard", "chain_choose": "slot?", "hand_won": "{name} wins hand {hand}: {count} slots next",
    "hand_start": "Hand {hand} starts: {name} begins",
}

NAMES = ["Alice", "Bob the Builder of Very Long Names", "Çağrı Ñúñez", "Дмитрий", "山田太郎", "Zoë 🎲", "Eve"]


def label_of(i: int) -> str:
    out, n = "", i + 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


def nimmt_view(stacks: int = 4, seats: int = 5, hand: int = 10, seed: int = 1) -> dict:
    rnd = random.Random(seed)
    tops = [rnd.randint(1, 100) for _ in range(stacks)]
    cards = sorted(rnd.sample(range(1, 101), min(hand, 100)))
    st = [{"id": i, "label": label_of(i), "top": t, "heads": render_nimmt.heads(t)} for i, t in enumerate(tops)]
    playable: dict = {}
    for s in st:
        fit = [c for c in cards if 1 <= (c - s["top"]) % 100 <= 10]
        if fit:
            playable[s["id"]] = fit
    return {
        "game": "nimmt", "seat": 0, "seats": seats, "round": 2, "rounds": seats, "to_move": 0, "phase": "play",
        "stacks": st, "hand_counts": [hand] + [rnd.randint(0, 12) for _ in range(seats - 1)],
        "bulls": [2] + [rnd.randint(0, 3) for _ in range(seats - 1)], "supply": 4, "draw_pile": 51,
        "scores": [rnd.randint(0, 40) for _ in range(seats)], "start_seat": 0,
        "turn": {"played_stacks": [st[1]["id"]] if stacks > 1 else [], "max_stacks": 2}, "victims": [],
        "hand": cards, "playable": playable,
    }


def garbage_view(players: int = 4, seed: int = 1) -> dict:
    rnd = random.Random(seed)
    ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10"]
    ps = []
    for p in range(players):
        n = 10 - p
        lay = [None if rnd.random() < 0.5 else (ranks[k] + rnd.choice("SHDC") if rnd.random() < 0.8 else "J" + rnd.choice("SHDC"))
               for k in range(n)]
        ps.append({"slots": n, "layout": lay})
    return {
        "game": "garbage", "seat": 1, "seats": players, "hand_no": 3, "to_move": 1, "phase": "jack",
        "players": ps, "stock": 40, "discard_top": "QS", "discard_count": 3, "in_hand": "JH",
        "can_take_discard": True, "jack_slots": [k + 1 for k, c in enumerate(ps[1]["layout"]) if c is None],
        "decks": 2, "start_seat": 0,
    }


PROFILE = {"name": "Çağrı Ñúñez", "game": "nimmt", "games": 42, "wins": 17, "win_rate": 17 / 42,
           "avg_penalty_per_round": 6.25, "rounds_won": 31, "bulls_earned": 12, "hands_won": None,
           "ordinal": 21.4, "mu": 27.1, "sigma": 1.9, "rank": 3}


def cases() -> dict:
    return {
        "nimmt_table_5p": lambda: render_nimmt.render_nimmt_table(nimmt_view(4, 5), NAMES, LABELS),
        "nimmt_table_7p_60stacks": lambda: render_nimmt.render_nimmt_table(nimmt_view(60, 7), NAMES, LABELS),
        "nimmt_hand_10": lambda: render_nimmt.render_nimmt_hand(nimmt_view(4, 5, 10), LABELS),
        "nimmt_hand_60": lambda: render_nimmt.render_nimmt_hand(nimmt_view(8, 5, 60), LABELS),
        "garbage_4p": lambda: render_garbage.render_garbage_table(garbage_view(4), NAMES, LABELS),
        "garbage_6p": lambda: render_garbage.render_garbage_table(garbage_view(6), NAMES, LABELS),
        "profile": lambda: render_profile.render_profile(PROFILE, LABELS),
    }


TAKE6_LABELS = {
    "deal": "Deal {deal} - turn {turn}/10", "limit": "Game ends at {limit} points", "deals": "{deals} deals",
    "status_choose": "Everyone chooses a card ({count} still to choose)", "status_row": "{name} picks a row for the {card}",
    "status_over": "Game over", "revealed": "Revealed", "hand": "Hand", "pile": "Pile", "score": "Score",
    "chosen": "chosen", "choosing": "choosing", "to_row": "→ {row}", "took": "took {row}", "picks_row": "picks a row",
    "deal_start": "Deal {deal} starts: new rows",
}


def _table_names(tables: int = 100, seed: int = 7) -> list[list[str]]:
    rnd = random.Random(seed)
    syllables = ["ka", "to", "mi", "ra", "ne", "lo", "su", "vi", "an", "el", "or", "ben", "zo", "qui"]

    def name() -> str:
        return " ".join("".join(rnd.choice(syllables) for _ in range(rnd.randint(1, 4))).title()
                        for _ in range(rnd.randint(1, 2)))
    return [[name() for _ in range(7)] for _ in range(tables)]


def _played(game: str, seats: int, seed: int, steps: int = 60) -> list[tuple[dict, list]]:
    """Views (of the seat that just moved) after each random move of a game,
    each with the public events a table keeps then (what its picture marks)."""
    from app.tables.manager import Table
    from core import registry
    from core.protocol import to_act

    g = registry.spec(game).engine().new(seats, seed)
    table = Table(id=1, guild_id=1, channel_id=1, game=game, host_id=1, max_seats=seats, options={})
    rnd = random.Random(seed)
    views = [(g.view(0), [])]
    while len(views) < steps and not g.over:
        seat = rnd.choice(sorted(to_act(g)))
        table.remember(g.apply(seat, rnd.choice(g.legal_actions(seat))))
        views.append((g.view(seat), table.recent))
    return views


def played_cases() -> dict:
    """Redraws of changing states (see the module's docstring)."""
    from cogs.games.take6 import render as render_take6

    names = _table_names()
    out = {}
    for key, views, draw in (
            ("nimmt_table_played", _played("nimmt", 5, 1),
             lambda v, n: render_nimmt.render_nimmt_table(v[0], n, LABELS, v[1])),
            ("nimmt_hand_played", [v for v in _played("nimmt", 5, 2) if v[0].get("hand")],
             lambda v, n: render_nimmt.render_nimmt_hand(v[0], LABELS)),
            ("garbage_played", _played("garbage", 5, 3),
             lambda v, n: render_garbage.render_garbage_table(v[0], n, LABELS, v[1])),
            ("take6_played", _played("take6", 6, 4),
             lambda v, n: render_take6.render_take6_table(v[0], n, TAKE6_LABELS, v[1]))):
        step = iter(range(10 ** 9))

        def fn(views=views, draw=draw) -> bytes:
            i = next(step)
            return draw(views[i % len(views)], names[i % len(names)])
        out[key] = fn
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--save", help="directory to write the sample PNGs to")
    ap.add_argument("-n", type=int, default=30, help="warm repetitions")
    args = ap.parse_args()
    import os

    from app.render import base as render_base

    fonts = [Path(p).name for p in (render_base.SHIPPED_FONT, *getattr(render_base, "FALLBACK_FONTS", ())) if p]
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores; fonts: {', '.join(fonts)}")
    for name, fn in {**cases(), **played_cases()}.items():
        t0 = time.perf_counter()
        png = fn()
        cold = (time.perf_counter() - t0) * 1000
        times = []
        for _ in range(args.n):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        print(f"{name:26s} cold {cold:6.1f} ms   warm median {times[len(times) // 2]:6.1f} ms"
              f"  best {times[0]:6.1f} ms   {len(png) // 1024:4d} KiB")
        if args.save:
            Path(args.save).mkdir(parents=True, exist_ok=True)
            (Path(args.save) / f"{name}.png").write_bytes(png)
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


if __name__ == "__main__":
    main()
