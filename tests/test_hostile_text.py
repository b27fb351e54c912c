"""`kernelindex.core.hostile.shown` over every code point, against the specifications' own lists: what XML 1.0 may
carry (its `Char` production) and what HTML's parser reports as an error (controls, noncharacters)."""

from __future__ import annotations

from kernelindex.core.hostile import shown

_PLANE_ENDS = {plane << 16 | low for plane in range(17) for low in (0xFFFE, 0xFFFF)}


def _xml_char(code: int) -> bool:
    """XML 1.0 (fifth edition), production [2]: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]."""
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def _html_error(code: int) -> bool:
    """WHATWG HTML, "preprocessing the input stream": a control other than ASCII white space and NUL (here
    DEL and the C1 controls, U+007F-U+009F), or a noncharacter (U+FDD0-U+FDEF, and the last two code points of
    every plane, the Infra standard's list of 34 written out)."""
    return 0x7F <= code <= 0x9F or 0xFDD0 <= code <= 0xFDEF or code in _PLANE_ENDS


def test_every_code_point_is_shown_as_itself_exactly_when_a_page_and_a_feed_may_carry_it() -> None:
    unfit = [code for code in range(0x110000) if not _xml_char(code) or _html_error(code)]
    assert len(unfit) == 2048 + 29 + 33 + 32 + 34  # surrogates, C0 but three, DEL and C1, FDD0-FDEF, plane ends
    every = "".join(map(chr, range(0x110000)))  # one string: each character is judged alone
    escapes = {code: repr(chr(code))[1:-1] for code in unfit}
    assert shown(every) == "".join(escapes.get(code, chr(code)) for code in range(0x110000))
    # Alone, an ASCII character takes the short way (printable ones are never searched): the same verdicts.
    assert [code for code in range(0x80) if shown(chr(code)) != chr(code)] == [code for code in unfit if code < 0x80]


def test_an_escaped_character_is_written_as_python_writes_it_and_text_around_it_stays() -> None:
    # The boundaries of the astral range, each side: U+1FFFD and U+20000 are characters, U+1FFFE and U+10FFFF not.
    text = "a\x00b\x7f\x9f\xa0\ufdcf\ufdd0\ufdef\ufdf0\U0001fffd\U0001fffe\U0001ffff\U00020000\U0010fffe\U0010ffff"
    assert shown(text) == (
        "a\\x00b\\x7f\\x9f\xa0\ufdcf\\ufdd0\\ufdef\ufdf0\U0001fffd\\U0001fffe\\U0001ffff\U00020000\\U0010fffe\\U0010ffff"
    )
    assert shown(None) is None and shown(3.5) == 3.5
