"""Checks of message / modal payloads against Discord's documented limits.

Each check returns a list of human readable problems; an empty list means the payload is fine.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .models import FLAG_COMPONENTS_V2

MAX_CONTENT = 2000
MAX_EMBEDS = 10
MAX_EMBED_TOTAL = 6000
MAX_ROWS = 5
MAX_CUSTOM_ID = 100
MAX_LABEL = 80
MAX_SELECT_OPTIONS = 25
MAX_V2_COMPONENTS = 40
MAX_V2_TEXT = 4000

BUTTON = 2
SELECTS = (3, 5, 6, 7, 8)


def _len(v: Any) -> int:
    return len(v) if isinstance(v, str) else 0


def check_embeds(embeds: Any) -> List[str]:
    problems: List[str] = []
    if embeds is None:
        return problems
    if not isinstance(embeds, list):
        return ["embeds is not a list"]
    if len(embeds) > MAX_EMBEDS:
        problems.append(f"more than {MAX_EMBEDS} embeds ({len(embeds)})")
    total = 0
    for i, e in enumerate(embeds):
        if not isinstance(e, dict):
            problems.append(f"embed {i} is not an object")
            continue
        t, d = _len(e.get("title")), _len(e.get("description"))
        if t > 256:
            problems.append(f"embed {i} title > 256 chars ({t})")
        if d > 4096:
            problems.append(f"embed {i} description > 4096 chars ({d})")
        total += t + d
        fields = e.get("fields") or []
        if len(fields) > 25:
            problems.append(f"embed {i} has more than 25 fields ({len(fields)})")
        for j, f in enumerate(fields):
            n, v = _len(f.get("name")), _len(f.get("value"))
            if n == 0 or n > 256:
                problems.append(f"embed {i} field {j} name must be 1-256 chars ({n})")
            if v == 0 or v > 1024:
                problems.append(f"embed {i} field {j} value must be 1-1024 chars ({v})")
            total += n + v
        footer = (e.get("footer") or {}).get("text")
        if _len(footer) > 2048:
            problems.append(f"embed {i} footer > 2048 chars")
        total += _len(footer)
        author = (e.get("author") or {}).get("name")
        if _len(author) > 256:
            problems.append(f"embed {i} author name > 256 chars")
        total += _len(author)
    if total > MAX_EMBED_TOTAL:
        problems.append(f"embeds total {total} chars > {MAX_EMBED_TOTAL}")
    return problems


def _check_custom_id(c: Dict[str, Any], where: str, seen: Dict[str, str], problems: List[str]) -> None:
    cid = c.get("custom_id")
    if not isinstance(cid, str) or not cid:
        problems.append(f"{where}: custom_id missing")
        return
    if len(cid) > MAX_CUSTOM_ID:
        problems.append(f"{where}: custom_id > {MAX_CUSTOM_ID} chars ({len(cid)}): {cid[:40]}...")
    if cid in seen:
        problems.append(f"{where}: duplicate custom_id {cid!r} (also {seen[cid]})")
    else:
        seen[cid] = where


def _check_button(c: Dict[str, Any], where: str, seen: Dict[str, str], problems: List[str]) -> None:
    style = c.get("style")
    label = c.get("label")
    if _len(label) > MAX_LABEL:
        problems.append(f"{where}: button label > {MAX_LABEL} chars ({len(label)})")
    if style == 5:
        if not c.get("url"):
            problems.append(f"{where}: link button without url")
        if c.get("custom_id"):
            problems.append(f"{where}: link button must not have a custom_id")
    elif style == 6:
        if not c.get("sku_id"):
            problems.append(f"{where}: premium button without sku_id")
    else:
        if style not in (1, 2, 3, 4):
            problems.append(f"{where}: invalid button style {style!r}")
        if c.get("url"):
            problems.append(f"{where}: non-link button with url")
        _check_custom_id(c, where, seen, problems)
        if not label and not c.get("emoji"):
            problems.append(f"{where}: button needs a label or an emoji")


def _check_select(c: Dict[str, Any], where: str, seen: Dict[str, str], problems: List[str]) -> None:
    _check_custom_id(c, where, seen, problems)
    if _len(c.get("placeholder")) > 150:
        problems.append(f"{where}: placeholder > 150 chars")
    mn = c.get("min_values", 1)
    mx = c.get("max_values", 1)
    if not isinstance(mn, int) or not 0 <= mn <= 25:
        problems.append(f"{where}: min_values {mn!r} not in 0..25")
    if not isinstance(mx, int) or not 1 <= mx <= 25:
        problems.append(f"{where}: max_values {mx!r} not in 1..25")
    if isinstance(mn, int) and isinstance(mx, int) and mn > mx:
        problems.append(f"{where}: min_values {mn} > max_values {mx}")
    if c.get("type") == 3:
        options = c.get("options") or []
        if not options:
            problems.append(f"{where}: string select without options")
        if len(options) > MAX_SELECT_OPTIONS:
            problems.append(f"{where}: select has {len(options)} options > {MAX_SELECT_OPTIONS}")
        if isinstance(mx, int) and options and mx > len(options):
            problems.append(f"{where}: max_values {mx} > number of options {len(options)}")
        if isinstance(mn, int) and options and mn > len(options):
            problems.append(f"{where}: min_values {mn} > number of options {len(options)}")
        values = set()
        for k, o in enumerate(options):
            lab, val = o.get("label"), o.get("value")
            if not lab or _len(lab) > 100:
                problems.append(f"{where} option {k}: label must be 1-100 chars")
            if not val or _len(val) > 100:
                problems.append(f"{where} option {k}: value must be 1-100 chars")
            if _len(o.get("description")) > 100:
                problems.append(f"{where} option {k}: description > 100 chars")
            if val in values:
                problems.append(f"{where}: duplicate option value {val!r}")
            values.add(val)
    elif c.get("options"):
        problems.append(f"{where}: only string selects take options")


def _check_row(row: Dict[str, Any], where: str, seen: Dict[str, str], problems: List[str]) -> None:
    children = row.get("components") or []
    if not children:
        problems.append(f"{where}: empty action row")
        return
    buttons = [c for c in children if c.get("type") == BUTTON]
    selects = [c for c in children if c.get("type") in SELECTS]
    others = [c for c in children if c.get("type") not in SELECTS and c.get("type") != BUTTON]
    if others:
        problems.append(f"{where}: component type(s) {[c.get('type') for c in others]} not allowed in a message action row")
    if selects and len(children) > 1:
        problems.append(f"{where}: a select must be alone in its row ({len(children)} components)")
    if len(buttons) > 5:
        problems.append(f"{where}: more than 5 buttons in a row ({len(buttons)})")
    for k, c in enumerate(children):
        w = f"{where} item {k}"
        if c.get("type") == BUTTON:
            _check_button(c, w, seen, problems)
        elif c.get("type") in SELECTS:
            _check_select(c, w, seen, problems)


def check_components(components: Any, flags: int = 0) -> List[str]:
    problems: List[str] = []
    if components is None:
        return problems
    if not isinstance(components, list):
        return ["components is not a list"]
    seen: Dict[str, str] = {}
    if not flags & FLAG_COMPONENTS_V2:
        if len(components) > MAX_ROWS:
            problems.append(f"more than {MAX_ROWS} action rows ({len(components)})")
        for i, row in enumerate(components):
            if not isinstance(row, dict) or row.get("type") != 1:
                problems.append(f"top-level component {i} is not an action row (type {row.get('type') if isinstance(row, dict) else row!r})")
                continue
            _check_row(row, f"row {i}", seen, problems)
        return problems

    # components v2: walk the tree
    count = 0
    text_total = 0

    def walk(items: List[Any], where: str) -> None:
        nonlocal count, text_total
        for k, c in enumerate(items):
            if not isinstance(c, dict):
                problems.append(f"{where}[{k}] is not an object")
                continue
            count += 1
            w = f"{where}[{k}]"
            t = c.get("type")
            if t == 1:
                _check_row(c, w, seen, problems)
                count += len(c.get("components") or [])
            elif t == 9:  # section
                walk(c.get("components") or [], w + ".components")
                acc = c.get("accessory")
                if isinstance(acc, dict):
                    count += 1
                    if acc.get("type") == BUTTON:
                        _check_button(acc, w + ".accessory", seen, problems)
            elif t == 17:  # container
                walk(c.get("components") or [], w + ".components")
            elif t == 10:
                text_total += _len(c.get("content"))
            elif t == BUTTON or t in SELECTS:
                problems.append(f"{w}: interactive component type {t} outside an action row")

    walk(components, "components")
    if count > MAX_V2_COMPONENTS:
        problems.append(f"more than {MAX_V2_COMPONENTS} components ({count})")
    if text_total > MAX_V2_TEXT:
        problems.append(f"text displays total {text_total} chars > {MAX_V2_TEXT}")
    return problems


def check_message(payload: Dict[str, Any], *, has_files: bool = False, partial: bool = False,
                  flags: Optional[int] = None) -> List[str]:
    """Validate a message create (partial=False) or edit (partial=True) body."""
    problems: List[str] = []
    flags = payload.get("flags") if flags is None else flags
    flags = int(flags or 0)
    content = payload.get("content")
    if content is not None and not isinstance(content, str):
        problems.append("content is not a string")
    elif content and len(content) > MAX_CONTENT:
        problems.append(f"content > {MAX_CONTENT} chars ({len(content)})")
    problems += check_embeds(payload.get("embeds"))
    problems += check_components(payload.get("components"), flags)
    if flags & FLAG_COMPONENTS_V2 and (payload.get("content") or payload.get("embeds")):
        problems.append("content/embeds cannot be used with IS_COMPONENTS_V2")
    if not partial:
        empty = not (
            payload.get("content")
            or payload.get("embeds")
            or payload.get("components")
            or payload.get("sticker_ids")
            or payload.get("poll")
            or has_files
        )
        if empty:
            problems.append("cannot send an empty message")
    return problems


def check_modal(data: Dict[str, Any]) -> List[str]:
    problems: List[str] = []
    title = data.get("title")
    if not isinstance(title, str) or not 1 <= len(title) <= 45:
        problems.append(f"modal title must be 1-45 chars ({title!r})")
    cid = data.get("custom_id")
    if not isinstance(cid, str) or not cid or len(cid) > MAX_CUSTOM_ID:
        problems.append(f"modal custom_id must be 1-{MAX_CUSTOM_ID} chars")
    comps = data.get("components") or []
    if not 1 <= len(comps) <= 5:
        problems.append(f"modal must have 1-5 components ({len(comps)})")
    seen: Dict[str, str] = {}
    for i, c in enumerate(comps):
        inner = []
        if c.get("type") == 1:
            inner = c.get("components") or []
        elif c.get("type") == 18:
            inner = [c.get("component")] if c.get("component") else []
            if _len(c.get("label")) > 45:
                problems.append(f"modal label {i} > 45 chars")
        for k, x in enumerate(inner):
            if isinstance(x, dict) and x.get("type") in (4, 3, 5, 6, 7, 8, 19):
                _check_custom_id(x, f"modal component {i}.{k}", seen, problems)
                if x.get("type") == 4 and _len(x.get("label")) > 45:
                    problems.append(f"modal text input {i}.{k} label > 45 chars")
    return problems
