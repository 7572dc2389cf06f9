"""The coach's words: a hint names the hard level's move and quotes one line
of the search's own figures.  Shared by the game cogs (not an extension).

>>> from core.nimmt import Play
>>> from core.nimmt_ai import Decision, Figure
>>> d = Decision(Play(1, (56,)), 200, (Figure(Play(1, (56,)), 200, 0.41, 2.5, 1.0),))
>>> hint_text("en", "nimmt", d, ["Ana", "Ben"], last_round=True)
'💡 Play 56 on B: in 200 simulated endings of the game you finish first 41% of the time and take 2.5 penalty points on average.'
"""
from __future__ import annotations

from typing import Any, Sequence

import discord

from app.i18n.catalogue import normalise, t


def _percent(lang: str, share: float) -> str:
    return t(lang, "ai.percent", value=f"{100 * share:.0f}")


def _decimal(lang: str, value: float) -> str:
    text = f"{value:.1f}"
    return text.replace(".", ",") if normalise(lang) in ("es", "de") else text


def move_text(lang: str, game: str, action: Any, names: Sequence[str], discard_top: str | None = None) -> str:
    """A move in words (11 nimmt! or Garbage)."""
    kind = type(action).__name__
    if game == "nimmt":
        from core.nimmt import stack_label

        if kind == "Play":
            return t(lang, "ai.move_play", cards=", ".join(map(str, action.cards)), label=stack_label(action.stack))
        if kind == "Take":
            return t(lang, "ai.move_take", label=stack_label(action.stack))
        if kind == "Pass":
            return t(lang, "ai.move_pass")
        if kind == "Steal":
            return t(lang, "ai.move_steal", name=discord.utils.escape_markdown(names[action.victim]))
        return t(lang, "ai.move_open", card=action.card)
    if kind == "Draw":
        return t(lang, "ai.move_draw")
    if kind == "Discard":
        from cogs.garbage import card_name

        return t(lang, "ai.move_discard", card=card_name(lang, discard_top) if discard_top else "-")
    return t(lang, "ai.move_jack", slot=action.slot)


def hint_text(lang: str, game: str, decision: Any, names: Sequence[str], *, last_round: bool = False,
              discard_top: str | None = None) -> str:
    """The hint: the move, and why in the search's figures (best and next best)."""
    move = move_text(lang, game, decision.action, names, discard_top)
    figures = decision.figures
    if not figures:
        return t(lang, "ai.hint_only", move=move)
    best = figures[0]
    if game == "nimmt":
        key = "ai.hint_nimmt_last" if last_round else "ai.hint_nimmt"
        lines = [t(lang, key, move=move, worlds=best.worlds, first=_percent(lang, best.first),
                   penalty=_decimal(lang, best.penalty))]
        if len(figures) > 1:
            other = figures[1]
            lines.append(t(lang, "ai.hint_next_nimmt", move=move_text(lang, game, other.action, names),
                           first=_percent(lang, other.first), penalty=_decimal(lang, other.penalty)))
    else:
        lines = [t(lang, "ai.hint_garbage", move=move, worlds=best.worlds, first=_percent(lang, best.first))]
        if len(figures) > 1:
            other = figures[1]
            lines.append(t(lang, "ai.hint_next_garbage", move=move_text(lang, game, other.action, names, discard_top),
                           first=_percent(lang, other.first)))
    return "\n".join(lines)
