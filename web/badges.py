"""SVG badges a README can embed: a label on the left, a message on the right (shields.io's shape).

Text widths are estimated from per-character advances of an 11 px sans-serif (Verdana's, rounded),
so a badge fits its words without a font on the server; the SVG names no font file and no host.

Its words come from contributors (an implementation's name, its first author), so the SVG is written by the
template engine (`templates/badge.svg`, autoescaped: quotes too, in attributes and text), never by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelindex.web.render import templates

__all__ = ["Badge", "badge", "text_width"]

_NARROW = set("fijlrt.,:;'!|I ·")
_WIDE = set("mwMWµ%@")
PADDING = 6


def text_width(text: str) -> int:
    """Estimated width in px of `text` at 11 px: 3.5 for narrow glyphs, 10 for wide, 7 otherwise.

    >>> text_width("rank 2/2")  # r and space narrow: 3.5 + 3 * 7 + 3.5 + 3 * 7
    49
    """
    total = sum(3.5 if c in _NARROW else 10 if c in _WIDE else 7 for c in text)
    return round(total)


@dataclass(frozen=True, slots=True)
class Badge:
    label: str
    message: str
    color: str  # a CSS colour with at least 4.5:1 contrast against white text

    @property
    def label_width(self) -> int:
        return text_width(self.label) + 2 * PADDING

    @property
    def message_width(self) -> int:
        return text_width(self.message) + 2 * PADDING

    @property
    def width(self) -> int:
        return self.label_width + self.message_width


GREY = "#555555"
GREEN = "#1a7f37"  # a record holder
BLUE = "#0b5cad"  # ranked
AMBER = "#8a5300"  # not ranked


def badge(label: str, message: str, color: str = BLUE) -> str:
    """The SVG of a badge, with a <title> so screen readers and tooltips read it whole (the pages' template
    environment: autoescape, and characters XML cannot carry made visible)."""
    template = templates().get_template("badge.svg")
    return template.render(badge=Badge(label, message, color), title=f"{label}: {message}", grey=GREY)
