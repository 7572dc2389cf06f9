"""Checks of message / modal payloads against Discord's documented limits.

Each check returns a list of human readable problems; an empty list means the payload is fine.
"""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Set

from .models import FLAG_COMPONENTS_V2, walk_components as walk

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
        problems.append(f"{where}: button label > {MAX_LABEL} chars ({_len(label)})")
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


#: the component types a Components V2 message may hold at its top level, and in a container
V2_TOP_LEVEL = {1: "action row", 9: "section", 10: "text display", 12: "media gallery", 13: "file",
                14: "separator", 17: "container"}
V2_IN_CONTAINER = {1, 9, 10, 12, 13, 14}
SECTION, TEXT_DISPLAY, THUMBNAIL, MEDIA_GALLERY, FILE, SEPARATOR, CONTAINER = 9, 10, 11, 12, 13, 14, 17
MAX_GALLERY_ITEMS = 10
MAX_SECTION_TEXTS = 3
MAX_MEDIA_DESCRIPTION = 1024
MAX_COMPONENT_ID = 2**31 - 1  # "32 bit integer"
ATTACHMENT_URL = "attachment://"


def with_ids(components: Any) -> List[Dict[str, Any]]:
    """A copy of ``components`` as Discord stores and returns them: every component has an
    ``id``, the ones sent without one numbered 1, 2, ... in order, skipping the ids the
    message's other components already have (Discord's component reference, *id*)."""
    out = copy.deepcopy(list(components or []))
    taken = {c["id"] for c in walk(out) if isinstance(c.get("id"), int) and c["id"] > 0}
    n = 0
    for c in walk(out):
        if not isinstance(c.get("id"), int) or c["id"] <= 0:  # 0: "incremented to 1, then generated"
            n += 1
            while n in taken:
                n += 1
            c["id"] = n
    return out


def _check_media(media: Any, where: str, files: Optional[Set[str]], problems: List[str],
                 *, only_attachments: bool = False) -> None:
    """An unfurled media item: a url, or ``attachment://<filename>`` of a file the message has."""
    if not isinstance(media, dict) or not isinstance(media.get("url"), str) or not media["url"]:
        problems.append(f"{where}: media item without a url")
        return
    url = media["url"]
    if url.startswith(ATTACHMENT_URL):
        name = url[len(ATTACHMENT_URL):]
        if files is not None and name not in files:
            problems.append(f"{where}: {url} names no attachment of the message (it has {sorted(files)})")
    elif only_attachments:
        problems.append(f"{where}: a file component only takes attachment://<filename> ({url})")
    elif not url.startswith(("http://", "https://")):
        problems.append(f"{where}: media url {url!r} is neither http(s) nor attachment://")


def _check_description(c: Dict[str, Any], where: str, problems: List[str]) -> None:
    if _len(c.get("description")) > MAX_MEDIA_DESCRIPTION:
        problems.append(f"{where}: description > {MAX_MEDIA_DESCRIPTION} chars")


def _held(value: Any, holder: str, most: int, what: str, problems: List[str]) -> List[Any]:
    """What a layout component holds (``value``), which must be a list of 1 to ``most``; a
    problem (``holder`` holds 1 to ``most`` ``what``) otherwise, and what of it to check further."""
    if not isinstance(value, list) or not 1 <= len(value) <= most:
        n = len(value) if isinstance(value, list) else value
        problems.append(f"{holder} holds 1 to {most} {what} ({n})")
    return value if isinstance(value, list) else []


def check_components(components: Any, flags: int = 0, files: Optional[Set[str]] = None) -> List[str]:
    """A message's components against Discord's component reference. Without IS_COMPONENTS_V2:
    at most 5 action rows. With it: the layout types at the top level (action row, section,
    text display, media gallery, file, separator, container), each holding only what the
    reference lets it hold, at most 40 components counted at every depth, at most 4,000
    characters of text display in all; ``id``s unique within the message. ``files``: the
    names of the message's attachments, which ``attachment://`` must name (None: unchecked)."""
    problems: List[str] = []
    if components is None:
        return problems
    if not isinstance(components, list):
        return ["components is not a list"]
    seen: Dict[str, str] = {}
    ids: Dict[int, str] = {}
    for c in walk(components):
        cid = c.get("id")
        if cid is None:
            continue
        if not isinstance(cid, int) or isinstance(cid, bool) or not 0 <= cid <= MAX_COMPONENT_ID:
            problems.append(f"component id {cid!r} is not a 32 bit integer")
        elif cid and cid in ids:
            problems.append(f"duplicate component id {cid} (type {c.get('type')} and {ids[cid]})")
        elif cid:
            ids[cid] = f"type {c.get('type')}"
    if not flags & FLAG_COMPONENTS_V2:
        if len(components) > MAX_ROWS:
            problems.append(f"more than {MAX_ROWS} action rows ({len(components)})")
        for i, row in enumerate(components):
            if not isinstance(row, dict) or row.get("type") != 1:
                t = row.get("type") if isinstance(row, dict) else row
                problems.append(f"top-level component {i} is not an action row (type {t!r})"
                                + (": layout and content components need IS_COMPONENTS_V2" if t in V2_TOP_LEVEL else ""))
                continue
            _check_row(row, f"row {i}", seen, problems)
        return problems

    count = sum(1 for _ in walk(components))
    text_total = 0

    def one(c: Any, where: str, allowed: Dict[int, str] | Set[int]) -> None:
        nonlocal text_total
        if not isinstance(c, dict):
            problems.append(f"{where} is not an object")
            return
        t = c.get("type")
        if t not in allowed:
            problems.append(f"{where}: component type {t!r} is not allowed here")
            return
        if t == 1:
            _check_row(c, where, seen, problems)
        elif t == TEXT_DISPLAY:
            content = c.get("content")
            if not isinstance(content, str) or not content:
                problems.append(f"{where}: text display without content")
            else:
                text_total += len(content)
        elif t == SECTION:
            texts = _held(c.get("components"), f"{where}: a section", MAX_SECTION_TEXTS, "text displays", problems)
            for k, x in enumerate(texts):
                one(x, f"{where}.components[{k}]", {TEXT_DISPLAY})
            acc = c.get("accessory")
            if not isinstance(acc, dict) or acc.get("type") not in (BUTTON, THUMBNAIL):
                problems.append(f"{where}: a section needs an accessory, a button or a thumbnail")
            elif acc.get("type") == BUTTON:
                _check_button(acc, f"{where}.accessory", seen, problems)
            else:
                _check_media(acc.get("media"), f"{where}.accessory", files, problems)
                _check_description(acc, f"{where}.accessory", problems)
        elif t == MEDIA_GALLERY:
            items = _held(c.get("items"), f"{where}: a media gallery", MAX_GALLERY_ITEMS, "items", problems)
            for k, item in enumerate(items):
                w = f"{where}.items[{k}]"
                if not isinstance(item, dict):
                    problems.append(f"{w} is not an object")
                    continue
                _check_media(item.get("media"), w, files, problems)
                _check_description(item, w, problems)
        elif t == FILE:
            _check_media(c.get("file"), where, files, problems, only_attachments=True)
        elif t == SEPARATOR:
            if c.get("spacing", 1) not in (1, 2):
                problems.append(f"{where}: separator spacing must be 1 or 2 ({c.get('spacing')!r})")
            if not isinstance(c.get("divider", True), bool):
                problems.append(f"{where}: separator divider must be a boolean")
        elif t == CONTAINER:
            accent = c.get("accent_color")
            if accent is not None and (not isinstance(accent, int) or not 0 <= accent <= 0xFFFFFF):
                problems.append(f"{where}: accent_color {accent!r} is not an RGB value 0x000000-0xFFFFFF")
            if not isinstance(c.get("spoiler", False), bool):
                problems.append(f"{where}: spoiler must be a boolean")
            children = c.get("components")
            if not isinstance(children, list):
                problems.append(f"{where}: a container needs components")
                return
            for k, x in enumerate(children):
                one(x, f"{where}.components[{k}]", V2_IN_CONTAINER)

    for k, c in enumerate(components):
        one(c, f"components[{k}]", V2_TOP_LEVEL)
    if count > MAX_V2_COMPONENTS:
        problems.append(f"more than {MAX_V2_COMPONENTS} components ({count}, nested ones counted)")
    if text_total > MAX_V2_TEXT:
        problems.append(f"text displays total {text_total} chars > {MAX_V2_TEXT}")
    return problems


def check_message(payload: Dict[str, Any], *, has_files: bool = False, partial: bool = False,
                  flags: Optional[int] = None, current: Optional[Dict[str, Any]] = None,
                  files: Optional[Set[str]] = None) -> List[str]:
    """Validate a message create (partial=False) or edit (partial=True) body. ``current``: for an
    edit, the message as it is (its ``flags``, ``content``, ``embeds``), so that the message the
    edit leaves is checked: IS_COMPONENTS_V2 cannot be taken off a message that has it, and a
    Components V2 message has no content, embeds, stickers or poll. ``files``: the names of the
    attachments the message will have (what ``attachment://`` may name)."""
    problems: List[str] = []
    flags = payload.get("flags") if flags is None else flags
    flags = int(flags or 0)
    was = int((current or {}).get("flags") or 0)
    if was & FLAG_COMPONENTS_V2:
        if payload.get("flags") is not None and not int(payload["flags"]) & FLAG_COMPONENTS_V2:
            problems.append("IS_COMPONENTS_V2 cannot be removed from a message that has it")
        flags |= FLAG_COMPONENTS_V2
    content = payload.get("content")
    if content is not None and not isinstance(content, str):
        problems.append("content is not a string")
    elif content and len(content) > MAX_CONTENT:
        problems.append(f"content > {MAX_CONTENT} chars ({len(content)})")
    problems += check_embeds(payload.get("embeds"))
    problems += check_components(payload.get("components"), flags, files)
    if flags & FLAG_COMPONENTS_V2:
        after = {k: payload[k] if k in payload else (current or {}).get(k) for k in ("content", "embeds")}
        used = [k for k, v in after.items() if v] + [k for k in ("sticker_ids", "poll") if payload.get(k)]
        if used:
            problems.append(f"{', '.join(used)} cannot be used with IS_COMPONENTS_V2"
                            + (" (still on the message: clear them in the edit)" if current and not any(
                                payload.get(k) for k in used) else ""))
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
        inner: List[Any] = []
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
