"""What of a hostile value may leave the registry, for every exit (pages, badges, feeds): a link only when
it is an http(s) URL (the rule new contributions are held to, `kernelindex.registry.kinds.content.link_problem`), a
contributor's page only as a quoted path on a fixed host, and text only with the characters a page or a
feed cannot carry as themselves written as escapes (`shown`): those XML 1.0 forbids (as
`kernelindex.registry.kinds.content.escape_forbidden` writes them), and those HTML's parser reports as errors (DEL, the
C1 controls, the noncharacters).

Published data may predate the rules a new contribution must pass, so an exit never trusts what it shows.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any
from urllib.parse import quote, urlunsplit

__all__ = ["HOSTS", "link", "profile_link", "repository_link", "shown"]

HOSTS = {"github": "github.com", "gitlab": "gitlab.com", "huggingface": "huggingface.co"}
"""Where a project's or a model's repository lives, by the host kinds manifests name (`ProjectHost.kind`,
`ModelRepository.host`); `other` has no fixed host, so its id is never a link."""


def link(value: Any) -> str | None:
    """`value` when it may be an `href` or `src` (an http(s) URL with a host), else None, and then a page
    shows it as text. Allow-listed, never deny-listed: `javascript:`, `data:`, `kernelindex:artifact/...`,
    `//host` and anything with white space or controls are text.

    >>> link("https://example.com/log?x=1"), link("javascript:alert(1)"), link(" https://x.example")
    ('https://example.com/log?x=1', None, None)
    """
    from kernelindex.registry.kinds.content import (
        link_problem,  # on first use: a server starts without the manifest kinds
    )

    if isinstance(value, str) and link_problem(value) is None:
        return value
    return None


def profile_link(host: str, *path: str) -> str | None:
    """A link to a page on a fixed host built from values (`https://github.com/<user>`): each value quoted as
    one path segment, so none can leave the host or climb the path; None when a value is empty or not text.

    >>> profile_link("github.com", "octo cat"), profile_link("github.com", ".."), profile_link("github.com", "")
    ('https://github.com/octo%20cat', 'https://github.com/%2E%2E', None)
    """
    if not path or not all(isinstance(part, str) and part for part in path):
        return None
    # `.` and `..` are quoted too: a browser resolves them as dot-segments even inside a path.
    segments = [quote(part, safe="") if part not in (".", "..") else part.replace(".", "%2E") for part in path]
    return urlunsplit(("https", host, "/" + "/".join(segments), "", ""))


def repository_link(kind: Any, ident: Any) -> str | None:
    """The page of a repository a manifest names by host kind and id (`github`, `owner/name`): the fixed
    host, and the id's parts (split on `/`) each quoted as a path segment; None for an unknown host.

    >>> repository_link("github", "triton-lang/triton"), repository_link("other", "x")
    ('https://github.com/triton-lang/triton', None)
    >>> repository_link("github", "a/../../evil.example?x=1")
    'https://github.com/a/%2E%2E/%2E%2E/evil.example%3Fx%3D1'
    """
    host = HOSTS.get(kind) if isinstance(kind, str) else None
    if host is None or not isinstance(ident, str):
        return None
    return profile_link(host, *ident.split("/"))


_ASTRAL_ENDS = "\U0001fffe-\U0010ffff"
"""Where the noncharacters of planes 1-16 lie (the last two code points of each): one range, each character in
it told apart in `_escaped`. Listed one by one (34 characters) in the class instead, every character of every
string was compared with each of them: 6.7 µs for 180 ASCII characters, against 0.5 µs with the range."""


@cache
def _unshown() -> re.Pattern[str]:
    from kernelindex.registry.kinds.content import XML_FORBIDDEN  # on first use, as `link`

    return re.compile(f"[{XML_FORBIDDEN}\x7f-\x9f\ufdd0-\ufdef{_ASTRAL_ENDS}]")


def _escaped(found: re.Match[str]) -> str:
    character = found.group()
    if ord(character) > 0xFFFF and ord(character) & 0xFFFE != 0xFFFE:
        return character  # in the range of `_ASTRAL_ENDS`, but no noncharacter: shown as itself
    return repr(character)[1:-1]


def shown(value: Any) -> Any:
    """A value as an exit shows it: each character a page or a feed cannot carry as itself written as its
    escape (U+0008 as `\\x08`, as `escape_forbidden` writes it), so what a manifest holds stays visible and
    the page or feed well-formed; non-text unchanged.

    >>> print(shown("N\\x08VIDIA"), shown(42), shown("\\U0001fffe \\U00020000"))
    N\\x08VIDIA 42 \\U0001fffe 𠀀
    """
    if isinstance(value, str):
        if value.isascii() and value.isprintable():
            return value  # U+0020 to U+007E only: none of them is escaped (half the time of the search)
        return _unshown().sub(_escaped, value)
    return value
