"""The render caches (glyph masks of ``rb.text``, text widths) change nothing a
player sees: every picture drawn through them, cold and warm, shows the very
pixels of the same picture drawn straight through Pillow
(``set_text_caches(False)``).  The PNG encoder (rows fed band by band to
ISA-L's deflate) gives back the image's very pixels, about as small as zlib's
level 1 in one piece, the way pictures were encoded before.  Pixels, not
bytes: ISA-L's deflate may pick other (equally valid) matches from one call
to the next, so two encodings of one picture can differ by a few bytes."""
from __future__ import annotations

import concurrent.futures
import importlib.util
import random
import struct
import zlib
from functools import partial
from typing import Any, Callable, Iterator

import pytest
from PIL import Image, ImageDraw

from app.i18n.catalogue import t
from app.render import base as rb, pool as render_pool
from cogs.games.garbage import render as render_garbage
from cogs.games.nimmt import render as render_nimmt
from cogs.games.take6 import render as render_take6
from core import registry
from core.protocol import to_act
from tests import ROOT

_spec = importlib.util.spec_from_file_location(
    "bench_render", ROOT / "bench" / "render.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def pixels(png: bytes) -> tuple[str, tuple[int, int], bytes]:
    """What a PNG shows, as Pillow reads it back."""
    import io
    with Image.open(io.BytesIO(png)) as im:
        im.load()
        return im.mode, im.size, im.tobytes()


def whole_png(im: Image.Image) -> bytes:
    """The encoder before the bands and ISA-L: every row padded, compressed at once by zlib."""
    if im.mode != "RGB":
        return _pillow_png(im)
    w, h = im.size
    raw = im.tobytes()
    rows = b"".join(b"\0" + raw[y * 3 * w:(y + 1) * 3 * w] for y in range(h))
    return b"".join((b"\x89PNG\r\n\x1a\n", rb._chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)),
                     rb._chunk(b"IDAT", zlib.compress(rows, 1)), rb._chunk(b"IEND", b"")))


def _pillow_png(im: Image.Image) -> bytes:
    import io
    buf = io.BytesIO()
    im.save(buf, "PNG", optimize=False, compress_level=1)
    return buf.getvalue()


@pytest.fixture
def straight(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[[], Any]], Any]]:
    """``straight(fn)``: ``fn()`` with every text cache off."""
    def run(fn: Callable[[], Any]) -> Any:
        rb.set_text_caches(False)
        try:
            return fn()
        finally:
            rb.set_text_caches(True)
    yield run
    rb.set_text_caches(True)


def test_bench_pictures_cold_and_warm_are_the_pictures_drawn_straight(straight):
    cases = bench.cases()
    reference = {name: pixels(straight(fn)) for name, fn in cases.items()}
    assert len(set(reference.values())) == len(cases)
    rb.clear_caches()
    cold = {name: pixels(fn()) for name, fn in cases.items()}
    warm = {name: pixels(fn()) for name, fn in cases.items()}
    for name in cases:
        assert cold[name] == reference[name], f"{name}: cold"
        assert warm[name] == reference[name], f"{name}: warm"


# --------------------------------------------------------------------------
# Redraws of games as they are played: the same texts at new places, new
# numbers, names turning gold, stacks taken, hands shrinking

NAMES = ["Ana", "Bob the Builder of Very Long Names", "Çağrı Ñúñez", "山田太郎", "Zoë 🎲", "Дмитрий", "Eve"]


def _labels(lang: str, prefix: str, keys: tuple[str, ...]) -> dict[str, str]:
    return {key: t(lang, f"{prefix}{key}") for key in keys}


def played(game: str, seats: int, seed: int, steps: int) -> list[dict[str, Any]]:
    """Views of a game after each of its first ``steps`` random moves."""
    g = registry.spec(game).engine().new(seats, seed)
    rng = random.Random(seed)
    views = [g.view(None)]
    for _ in range(steps):
        if g.over:
            break
        seat = rng.choice(sorted(to_act(g)))
        g.apply(seat, rng.choice(g.legal_actions(seat)))
        views.append(g.view(seat))
    return views


def redraws() -> list[Callable[[], bytes]]:
    out: list[Callable[[], bytes]] = []
    for lang, seats, seed in (("en", 5, 1), ("de", 7, 2), ("es", 3, 3)):
        table = _labels(lang, "render.", render_nimmt.NIMMT_TABLE_LABELS)
        hand = _labels(lang, "render.", render_nimmt.NIMMT_HAND_LABELS)
        for v in played("nimmt", seats, seed, 30):
            out.append(partial(render_nimmt.render_nimmt_table, v, NAMES, table))
            if v["seat"] is not None:
                out.append(partial(render_nimmt.render_nimmt_hand, v, hand))
        labels = _labels(lang, "render.", render_garbage.GARBAGE_TABLE_LABELS)
        for v in played("garbage", min(seats, 6), seed, 30):
            out.append(partial(render_garbage.render_garbage_table, v, NAMES, labels))
        labels = _labels(lang, "take6.r_", render_take6.TAKE6_TABLE_LABELS)
        for v in played("take6", seats, seed, 30):
            out.append(partial(render_take6.render_take6_table, v, NAMES, labels))
    return out


def test_redraws_of_played_games_are_the_pictures_drawn_straight(straight):
    draws = redraws()
    reference = [pixels(png) for png in straight(lambda: [draw() for draw in draws])]
    assert len(set(reference)) > len(draws) * 3 // 4, "the states change from picture to picture"
    rb.clear_caches()
    for rnd in ("first", "again"):  # cold, then warm
        mismatched = [i for i, draw in enumerate(draws) if pixels(draw()) != reference[i]]
        assert not mismatched, f"{rnd} pass: {len(mismatched)} of {len(draws)} pictures differ"


def test_pictures_drawn_by_threads_at_once_are_the_pictures(straight):
    """The painter thread, the default executor (6 nimmt!) and a warm-up may
    draw at once: the caches are shared under the render lock."""
    draws = redraws()[::4]
    reference = [pixels(png) for png in straight(lambda: [draw() for draw in draws])]
    rb.clear_caches()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda draw: pixels(draw()), draws * 2))
    assert got == reference * 2


async def test_redraws_in_the_worker_process_are_the_pictures_drawn_straight(straight):
    """The worker keeps caches of its own between pictures."""
    views = played("nimmt", 5, 4, 12)
    labels = _labels("en", "render.", render_nimmt.NIMMT_TABLE_LABELS)
    reference = [pixels(png) for png in straight(lambda: [render_nimmt.render_nimmt_table(v, NAMES, labels)
                                                            for v in views])]
    for _ in range(2):
        got = [pixels(await render_pool.draw(render_nimmt.render_nimmt_table, v, NAMES, labels)) for v in views]
        assert got == reference


# --------------------------------------------------------------------------
# Every field of the glyph cache's key: the same text drawn where only that
# field differs must give what Pillow draws, not the mask of the other one


VARIANTS: list[tuple[str, tuple[float, float], int, Any, str, int]] = [
    # (what differs, position, size, ink, anchor, stroke)
    ("base", (20.0, 30.0), 20, (250, 250, 250), "lm", 0),
    ("x fraction", (20.5, 30.0), 20, (250, 250, 250), "lm", 0),
    ("y fraction", (20.0, 30.75), 20, (250, 250, 250), "lm", 0),
    ("whole position", (61.0, 41.0), 20, (250, 250, 250), "lm", 0),
    ("colour", (20.0, 30.0), 20, (255, 202, 64), "lm", 0),
    ("font size", (20.0, 30.0), 21, (250, 250, 250), "lm", 0),
    ("anchor", (20.0, 30.0), 20, (250, 250, 250), "la", 0),
    ("anchor centre", (120.0, 30.0), 20, (250, 250, 250), "mm", 0),
    ("stroke", (20.0, 30.0), 20, (250, 250, 250), "lm", 1),
]


def _draw_variants(order: list[int], text: str, mode: str = "RGB") -> list[bytes]:
    out = []
    for i in order:
        _, xy, size, ink, anchor, stroke = VARIANTS[i]
        im = Image.new(mode, (260, 60), (27, 60, 47) if mode == "RGB" else 0)
        rb.text(ImageDraw.Draw(im), xy, text, rb.font(size), ink if mode == "RGB" else ink[0], anchor, stroke)
        out.append(im.tobytes())
    return out


@pytest.mark.parametrize("text", ["Round 2/5", "Çağrı 山田 🎲"])  # one font; a chain of three
@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_each_field_of_the_glyph_key_counts(text, mode, straight):
    order = list(range(len(VARIANTS)))
    reference = straight(lambda: _draw_variants(order, text, mode))
    # every variant draws differently (else the test could not catch a missing field)
    assert len(set(reference)) == len(VARIANTS)
    for first in order:  # each variant drawn right after each other one has filled the cache
        rb.clear_caches()
        got = _draw_variants([first] + order, text, mode)
        assert got[1:] == reference, [VARIANTS[i][0] for i in order if got[1 + i] != reference[i]]


def test_widths_fits_and_shrinks_are_the_measured_ones(straight):
    texts = ["Draw pile: 51", "Bob the Builder of Very Long Names", "山田太郎 Zoë 🎲", "x" * 80, ""]
    cases = [(s, size, w) for s in texts for size in (13, 18, 20) for w in (40.0, 64.5, 120.0, 400.0)]

    def measure() -> list[Any]:
        out = []
        for s, size, w in cases:
            f = rb.font(size)
            shrunk, sf = rb.shrink(s, size, w)
            out.append((f.getlength(s), rb.fit(s, f, w), shrunk, sf.size))
        return out

    reference = straight(measure)
    rb.clear_caches()
    assert measure() == reference and measure() == reference


def test_encoder_without_pillows_raw_encoder_gives_the_same_bytes(monkeypatch):
    im = Image.new("RGB", (421, 300), (27, 60, 47))
    d = ImageDraw.Draw(im)
    rng = random.Random(5)
    for _ in range(200):
        x, y = rng.randrange(421), rng.randrange(300)
        d.ellipse((x, y, x + rng.randrange(60), y + rng.randrange(60)), fill=tuple(rng.randrange(256) for _ in "rgb"))
    banded = rb.to_png(im)
    monkeypatch.setattr(rb, "_RAW_ENCODER", None)
    assert pixels(rb.to_png(im)) == pixels(banded) == pixels(whole_png(im)) == ("RGB", im.size, im.tobytes())


def test_every_bench_picture_encodes_to_its_pixels_about_as_small_as_before():
    """Each sample picture (tables, hands, profile card) decodes to the pixels it was
    drawn with, within 10% of the bytes zlib's level 1 took (what a player's client
    downloads)."""
    for name, draw in bench.cases().items():
        png = draw()
        shown = pixels(png)
        im = Image.frombytes(shown[0], shown[1], shown[2])
        before = whole_png(im)
        assert pixels(before) == shown, name
        assert len(png) <= 1.1 * len(before), (name, len(png), len(before))
