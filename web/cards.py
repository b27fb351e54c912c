"""Preview images of pages (Open Graph and Twitter cards): a card's words drawn on a 1200 x 630 PNG.

A card is its words (`Card`); `draw` turns them into the same bytes every time, for the same words and
the same Pillow: no timestamp or software name goes into the file, the font is the one shipped beside this
module (DejaVu Sans 2.37, `fonts/LICENSE.DejaVu`), and the PNG encoder's settings are fixed. The words are
also stored in the file as PNG international text chunks (iTXt: `Title`, `Description`), so a reader of the
file (or a test) finds what the image says without reading pixels.

The words come from the page's GraphQL answer (`web/card_pages.py`) and may be anything a manifest holds:
they are drawn as a page shows them (`drawable`: line and paragraph breaks and other white space are one
space, which Pillow's text layout otherwise refuses, and control characters are written as their escapes). A
line too long for the card is cut at a word and marked with an ellipsis, in a number of measurements that
does not grow with the text (`_fit`): only what could possibly fit is measured, and the cut is found by
bisection.

Drawing a card takes tens of milliseconds of CPU: `drawn` keeps the most recently drawn cards by their words
(every alias of a run, cohort or operation says the same words, and is drawn once), and a card is drawn in a
worker thread, never on the event loop (`draw` checks).
"""

from __future__ import annotations

import asyncio
import functools
import io
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kernelindex.core.hostile import shown
from kernelindex.web.link_previews import CARD_HEIGHT, CARD_WIDTH, SITE

if TYPE_CHECKING:
    from PIL import ImageFont

# Pillow is imported when the first card is drawn, not with the pages: a server that is never asked for a
# preview image keeps its modules and shared libraries (~4 MB resident) out of memory.

__all__ = ["FONT", "Card", "draw", "drawable", "drawn", "drawn_count"]

FONT = Path(__file__).resolve().parent / "fonts" / "DejaVuSans.ttf"

_MARGIN = 64
_INK = (27, 31, 36)
_MUTED = (69, 76, 85)
_ACCENT = (5, 80, 174)
_PAPER = (255, 255, 255)
_PLATE = (246, 248, 250)


@dataclass(frozen=True, slots=True)
class Card:
    """What a card says: a title (what it is about), a value in large type, up to three lines of facts,
    and a foot line (where and as of which commit)."""

    title: str
    value: str
    lines: tuple[str, ...]
    foot: str

    @property
    def description(self) -> str:
        """Everything the card says below its title, one line each (its `Description` text chunk)."""
        return "\n".join((self.value, *self.lines, self.foot))


@functools.cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    from PIL import ImageFont

    return ImageFont.truetype(str(FONT), size)


def drawable(text: str) -> str:
    """`text` as a card draws it: runs of white space (line and paragraph separators included: Pillow's layout
    fails on U+000A, U+000D, U+001C-U+001E, U+0085 and U+2029) as one space, and the characters a page
    writes as escapes (controls, noncharacters) written so here too.

    >>> drawable("Fused\\nRMSNorm\\u2029 on\\x85B200"), drawable("N\\x08VIDIA")
    ('Fused RMSNorm on B200', 'N\\\\x08VIDIA')
    """
    return str(shown(" ".join(text.split())))


_NARROWEST = 0.09
"""The narrowest advance of any glyph of the font, in ems (the hair space, U+200A, is 0.0996): no more than
width / (size * this) characters with an advance can fit on a line, so no more are ever measured."""


def _most(size: int, width: float) -> int:
    return int(width / (size * _NARROWEST)) + 1


def _longest(text: str, size: int, width: float, suffix: str = "") -> int:
    """The length of the longest prefix of `text` that, followed by `suffix`, fits `width` pixels at `size`
    (0 when none does): a bisection over at most `_most` characters, so ~10 measurements whatever the text."""
    font = _font(size)
    low, high = 0, min(len(text), _most(size, width))
    while low < high:
        middle = (low + high + 1) // 2
        if font.getlength(text[:middle] + suffix) <= width:
            low = middle
        else:
            high = middle - 1
    return low


def _at_word(text: str, length: int) -> int:
    """`length`, moved back to the last space before it when it falls inside a word that has one before it."""
    if length < len(text) and text[length] != " " and text[length - 1 : length] != " ":
        space = text.rfind(" ", 0, length)
        if space > 0:
            return space
    return length


def _fit(text: str, size: int, width: float) -> str:
    """`text` cut at a word (or a character) so that it fits `width` pixels at `size`, with an ellipsis."""
    if len(text) <= _most(size, width) and _font(size).getlength(text) <= width:
        return text
    return text[: _at_word(text, _longest(text, size, width, " …"))].rstrip() + " …"


def _wrap(text: str, size: int, width: float, lines: int) -> list[str]:
    """`text` in at most `lines` lines of `width` pixels, broken at words (inside a word too long for a line),
    the last cut with an ellipsis if it must be."""
    out: list[str] = []
    rest = text.strip(" ")
    while rest and len(out) < lines - 1:
        length = _at_word(rest, max(_longest(rest, size, width), 1))
        out.append(rest[:length].rstrip(" "))
        rest = rest[length:].lstrip(" ")
    if rest:
        out.append(_fit(rest, size, width))
    return out


def draw(card: Card) -> bytes:
    """The card as PNG bytes (RGB, 1200 x 630), the same for the same card. Called in a worker thread."""
    from PIL import Image, ImageDraw
    from PIL.PngImagePlugin import PngInfo

    assert _off_the_loop(), "a card is drawn in a worker thread, never on the event loop"

    image = Image.new("RGB", (CARD_WIDTH, CARD_HEIGHT), _PAPER)
    pen = ImageDraw.Draw(image)
    width = CARD_WIDTH - 2 * _MARGIN
    pen.rectangle((0, 0, CARD_WIDTH, 72), fill=_PLATE)
    pen.rectangle((0, 72, CARD_WIDTH, 75), fill=_ACCENT)
    pen.text((_MARGIN, 22), SITE, font=_font(28), fill=_INK)
    y = 104
    for line in _wrap(drawable(card.title), 50, width, 2):
        pen.text((_MARGIN, y), line, font=_font(50), fill=_INK)
        y += 62
    y += 14
    pen.text((_MARGIN, y), _fit(drawable(card.value), 92, width), font=_font(92), fill=_ACCENT)
    y += 122
    for line in card.lines[:3]:
        pen.text((_MARGIN, y), _fit(drawable(line), 32, width), font=_font(32), fill=_INK)
        y += 44
    pen.text((_MARGIN, CARD_HEIGHT - 56), _fit(drawable(card.foot), 24, width), font=_font(24), fill=_MUTED)
    info = PngInfo()
    info.add_itxt("Title", card.title)  # iTXt: UTF-8 (µ, ·, any name), where tEXt is Latin-1 only
    info.add_itxt("Description", card.description)
    out = io.BytesIO()
    image.save(out, format="PNG", pnginfo=info, compress_level=9)
    return out.getvalue()


def _off_the_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


_KEPT_BYTES = 8 * 1024 * 1024
"""PNG bytes of drawn cards kept (a card is 20-60 KB: a few hundred cards)."""
_kept: OrderedDict[Card, bytes] = OrderedDict()
_kept_size = 0
_draws = 0
_lock = threading.Lock()


def drawn(card: Card) -> bytes:
    """`draw(card)`, kept by the card's words: an alias of the same run, cohort or operation (a prefix of its
    digest, its name, `sha256:` or not) says the same words and is not drawn again. Least recently used
    cards go first beyond `_KEPT_BYTES`. Called in a worker thread."""
    global _kept_size, _draws
    with _lock:
        found = _kept.get(card)
        if found is not None:
            _kept.move_to_end(card)
            return found
    made = draw(card)
    with _lock:
        _draws += 1
        if card not in _kept:
            _kept[card] = made
            _kept_size += len(made)
        while _kept_size > _KEPT_BYTES and len(_kept) > 1:
            _, dropped = _kept.popitem(last=False)
            _kept_size -= len(dropped)
    return made


def drawn_count() -> int:
    """Cards drawn by `drawn` so far in this process (a kept card is not drawn again)."""
    return _draws
