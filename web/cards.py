"""Preview images of pages (Open Graph and Twitter cards): a card's words drawn on a 1200 x 630 PNG.

A card is its words (`Card`); `draw` turns them into the same bytes every time, for the same words and
the same Pillow: no timestamp or software name goes into the file, the font is the one shipped beside this
module (DejaVu Sans 2.37, `fonts/LICENSE.DejaVu`), and the PNG encoder's settings are fixed. The words are
also stored in the file as PNG international text chunks (iTXt: `Title`, `Description`), so a reader of the
file (or a test) finds what the image says without reading pixels.

The words come from the page's GraphQL answer (`web/card_pages.py`); a line too long for the card is cut
at a word and marked with an ellipsis.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kernelindex.web.link_previews import CARD_HEIGHT, CARD_WIDTH, SITE

if TYPE_CHECKING:
    from PIL import ImageFont

# Pillow is imported when the first card is drawn, not with the pages: a server that is never asked for a
# preview image keeps its modules and shared libraries (~4 MB resident) out of memory.

__all__ = ["FONT", "Card", "draw"]

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


def _fit(text: str, size: int, width: float) -> str:
    """`text` cut at a word (or a character) so that it fits `width` pixels at `size`, with an ellipsis."""
    font = _font(size)
    if font.getlength(text) <= width:
        return text
    words = text.split(" ")
    while len(words) > 1 and font.getlength(" ".join(words) + " …") > width:
        words.pop()
    cut = " ".join(words)
    while cut and font.getlength(cut + " …") > width:
        cut = cut[:-1]
    return cut.rstrip() + " …"


def _wrap(text: str, size: int, width: float, lines: int) -> list[str]:
    """`text` in at most `lines` lines of `width` pixels, the last cut with an ellipsis if it must be."""
    font = _font(size)
    out: list[str] = []
    words = text.split(" ")
    while words and len(out) < lines - 1:
        line = words.pop(0)
        while words and font.getlength(line + " " + words[0]) <= width:
            line += " " + words.pop(0)
        out.append(line)
    if words:
        out.append(_fit(" ".join(words), size, width))
    return out


def draw(card: Card) -> bytes:
    """The card as PNG bytes (RGB, 1200 x 630), the same for the same card."""
    from PIL import Image, ImageDraw
    from PIL.PngImagePlugin import PngInfo

    image = Image.new("RGB", (CARD_WIDTH, CARD_HEIGHT), _PAPER)
    pen = ImageDraw.Draw(image)
    width = CARD_WIDTH - 2 * _MARGIN
    pen.rectangle((0, 0, CARD_WIDTH, 72), fill=_PLATE)
    pen.rectangle((0, 72, CARD_WIDTH, 75), fill=_ACCENT)
    pen.text((_MARGIN, 22), SITE, font=_font(28), fill=_INK)
    y = 104
    for line in _wrap(card.title, 50, width, 2):
        pen.text((_MARGIN, y), line, font=_font(50), fill=_INK)
        y += 62
    y += 14
    pen.text((_MARGIN, y), _fit(card.value, 92, width), font=_font(92), fill=_ACCENT)
    y += 122
    for line in card.lines[:3]:
        pen.text((_MARGIN, y), _fit(line, 32, width), font=_font(32), fill=_INK)
        y += 44
    pen.text((_MARGIN, CARD_HEIGHT - 56), _fit(card.foot, 24, width), font=_font(24), fill=_MUTED)
    info = PngInfo()
    info.add_itxt("Title", card.title)  # iTXt: UTF-8 (µ, ·, any name), where tEXt is Latin-1 only
    info.add_itxt("Description", card.description)
    out = io.BytesIO()
    image.save(out, format="PNG", pnginfo=info, compress_level=9)
    return out.getvalue()
