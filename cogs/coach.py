"""The coach's words: a hint names the hard level's move and quotes one line
of the search's own figures.  Shared by the game cogs (not an extension);
each game's cog says its moves in words (its ``move_text``), and its
catalogue keys are ``ai.hint_<game>`` (``ai.hint_<game>_last`` in the last
round, where it has one) and ``ai.hint_next_<game>``, with the placeholders
``{move} {worlds} {first} {penalty}`` (a translation may use any of them).
"""
from __future__ import annotations

from typing import Any, Callable

from app.i18n.catalogue import has, normalise, t


def _percent(lang: str, share: float) -> str:
    return t(lang, "ai.percent", value=f"{100 * share:.0f}")


def _decimal(lang: str, value: float) -> str:
    text = f"{value:.1f}"
    return text.replace(".", ",") if normalise(lang) in ("es", "de") else text


def hint_text(lang: str, game: str, decision: Any, move_text: Callable[[Any], str], *,
              last_round: bool = False) -> str:
    """The hint: the move (``move_text(action)``, the game's words for it), and
    why in the search's figures (best and next best)."""
    move = move_text(decision.action)
    figures = decision.figures
    if not figures:
        return t(lang, "ai.hint_only", move=move)

    def figures_of(figure: Any) -> dict[str, Any]:
        return {"worlds": figure.worlds, "first": _percent(lang, figure.first),
                "penalty": _decimal(lang, getattr(figure, "penalty", 0.0))}

    best = figures[0]
    key = f"ai.hint_{game}"
    if last_round and has(f"{key}_last"):
        key = f"{key}_last"
    lines = [t(lang, key, move=move, **figures_of(best))]
    if len(figures) > 1:
        other = figures[1]
        lines.append(t(lang, f"ai.hint_next_{game}", move=move_text(other.action), **figures_of(other)))
    return "\n".join(lines)
