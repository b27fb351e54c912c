"""What the values of a new contribution may hold beyond their kind's schema: links that can only be
links, and text that XML can carry. Every constraint is here, in one place, so that the JSON Schemas
and the documentation can be read off it.

Pages, badges and feeds show what strangers send, often on answers cached as immutable. Two kinds of
value break them: a link whose scheme runs code or data (`javascript:`, `data:`, `vbscript:`...) and
a character XML 1.0 forbids (an Atom feed holding U+0008 stops parsing). Both are refused where a
contribution enters: `kernelindex validate` and `add`, every importer, the pull-request check (files
and commit trailers), and a new head of main before a server serves it.

Links are allow-listed, never deny-listed: `http:` or `https:` (any letter case), `//`, a host, an
optional port, then a path, query or fragment; nothing in the whole value that a browser would strip
or reinterpret (white space, control characters, a backslash or `@` before the path). A credential
(`https://user@host`) is refused too: a link in the registry never carries one, and `good@evil` is a
classic disguise. Artifact fields (`uri` of a digest-checked artifact) also take KernelIndex's own
reference to an artifact it stores, `kernelindex:artifact/<that artifact's digest>`: upstream writes
it for run logs and the published corpus holds 175 of them. It is never a link.

Text: every string and every key, anywhere in a manifest, holds only characters of XML 1.0's `Char`
production: no C0 control except tab, newline and carriage return, no U+FFFE or U+FFFF, no unpaired
surrogate. (JSON can carry them all, escaped; XML cannot, even escaped.)

"New contribution" means a manifest or a commit handed to the registry to judge or write. Nothing
already published is judged again: published bytes never change, the graph, exports and integrity
checks read them without validating, and the range checks judge only the files and commits a range
adds. A registry whose history holds such values serves them as they are, and the pages render them
inert.

>>> link_problem("HTTPS://example.com/x") is None
True
>>> link_problem("javascript:alert(1)")
'not an http(s) link: a link starts with http:// or https:// and a host'
>>> text_problem("tab\\tand newline\\n are fine") is None
True
>>> text_problem("bell\\x07")[:58]
'holds U+0007, a character XML 1.0 does not allow (a contro'
"""

from __future__ import annotations

import re

__all__ = [
    "ARTIFACT_SCHEME",
    "ARTIFACT_URI_PATTERN",
    "LINK_PATTERN",
    "LINK_SCHEMES",
    "XML_FORBIDDEN",
    "XML_TEXT_PATTERN",
    "artifact_uri_problem",
    "escape_forbidden",
    "link_problem",
    "text_problem",
]

LINK_SCHEMES = ("http", "https")
"""The only schemes a link may have (compared without regard to case)."""

_UNSAFE = r"\s\x00-\x20\x7f"  # white space and controls: browsers strip or reinterpret them in URLs
LINK_PATTERN = (
    r"^[Hh][Tt][Tt][Pp][Ss]?://"
    r"(?:\[[0-9A-Fa-f:.]+\]|[^" + _UNSAFE + r"/?#@\[\]\\:]+)"  # a host: a name or address, or [IPv6]
    r"(?::[0-9]{1,5})?"  # a port
    r"(?:[/?#][^" + _UNSAFE + r"]*)?$"  # a path, query or fragment
)
"""A link: `http(s)://host[:port][/path][?query][#fragment]`. ECMAScript-compatible (JSON Schema)."""

ARTIFACT_SCHEME = "kernelindex:artifact/"
ARTIFACT_URI_PATTERN = r"^kernelindex:artifact/sha256:[0-9a-f]{64}$"
"""KernelIndex's reference to an artifact it stores, by the artifact's digest (which the `digest`
beside it must repeat). Allowed in artifact `uri` fields only, besides a link."""

XML_FORBIDDEN = "\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff"
"""The characters XML 1.0 forbids, as a regex character class body (Python; `\\ud800-\\udfff` are
the unpaired surrogates a Python string can hold)."""
XML_TEXT_PATTERN = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$"
"""Text XML can carry, as a JSON Schema pattern (ECMAScript): unpaired surrogates are not text a
JSON Schema validator sees, so the parser refuses those (`kernelindex.registry.parse`)."""

_LINK = re.compile(LINK_PATTERN)
_ARTIFACT = re.compile(ARTIFACT_URI_PATTERN)
_FORBIDDEN = re.compile(f"[{XML_FORBIDDEN}]")

_NOT_A_LINK = "not an http(s) link: a link starts with http:// or https:// and a host"


def link_problem(value: str) -> str | None:
    """Why `value` may not be a link in a new contribution, or None.

    >>> [link_problem(v) is None for v in ("http://x", "https://x:8080/a?b#c", "https://[::1]/")]
    [True, True, True]
    >>> [link_problem(v) is None for v in (" https://x", "//x", "http:", "https:///x", "https://u@x")]
    [False, False, False, False, False]
    """
    if _LINK.fullmatch(value):  # fullmatch: `$` alone would also match before a final newline
        return None
    scheme, colon, rest = value.partition(":")
    if colon and scheme.lower() in LINK_SCHEMES and rest.startswith("//"):
        if re.match(r"//[^/?#]*@", rest):
            return "a link must not carry credentials (user@host)"
        if re.match(r"//(?:[/?#]|$|:)", rest):
            return "a link needs a host after http(s)://"
        return "not a well-formed http(s) link: no white space or control characters, a host without a backslash"
    return _NOT_A_LINK


def artifact_uri_problem(value: str, digest: str | None) -> str | None:
    """Why `value` may not be the `uri` of an artifact whose digest is `digest`, or None: a link, or
    `kernelindex:artifact/<digest>` naming that same artifact.

    >>> artifact_uri_problem("kernelindex:artifact/sha256:" + "a" * 64, "sha256:" + "a" * 64) is None
    True
    >>> print(artifact_uri_problem("kernelindex:artifact/sha256:" + "a" * 64, "sha256:" + "b" * 64)[:66])
    kernelindex:artifact/ names the artifact by its own digest: expect
    """
    if not value.startswith(ARTIFACT_SCHEME):
        problem = link_problem(value)
        if problem == _NOT_A_LINK:
            return f"{problem}, or kernelindex:artifact/<the artifact's digest>"
        return problem
    if not _ARTIFACT.fullmatch(value):
        return "a KernelIndex artifact is kernelindex:artifact/sha256:<64 lower-case hex digits>"
    if digest is not None and value != ARTIFACT_SCHEME + digest:
        return f"kernelindex:artifact/ names the artifact by its own digest: expected {ARTIFACT_SCHEME}{digest}"
    return None


def text_problem(value: str) -> str | None:
    """Why a string (a value or a key) may not appear in a new contribution, or None."""
    found = _FORBIDDEN.search(value)
    if found is None:
        return None
    return (
        f"holds U+{ord(found.group()):04X}, a character XML 1.0 does not allow (a control character other "
        "than tab, newline and carriage return, U+FFFE, U+FFFF or an unpaired surrogate)"
    )


def escape_forbidden(text: str) -> str:
    """`text` with each character XML cannot carry written as its escape (`\\x08`, `\\ufffe`): for a message
    that quotes hostile input (an importer's reason for skipping a row) rather than publishing it.

    >>> print(escape_forbidden("unknown GPU N\\x08VIDIA"))
    unknown GPU N\\x08VIDIA
    """
    return _FORBIDDEN.sub(lambda found: repr(found.group())[1:-1], text)
