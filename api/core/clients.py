"""Who a client is: the key its budget is kept under.

By default a client is the address its connection comes from (the peer). Behind a reverse proxy every peer is the
proxy, so an operator names the proxies it trusts (`KERNELINDEX_TRUSTED_PROXIES`, CIDRs): from those peers alone, the
address they report is read, from one header the operator names (`X-Forwarded-For` by default, or RFC 7239's
`Forwarded`: a proxy that sets one passes the other through untouched, so reading both would read a forgery). The
header lists the hops, each proxy appending the address it received the request from; the client is the rightmost
address that is not a trusted proxy (every address left of it was written by someone we do not trust). A header from
any other peer is ignored, so a forged one changes nothing.

An IPv6 client is keyed by its /64: one host is commonly given a whole /64, and keying by the full address would give
it 2^64 budgets.

    >>> proxies = TrustedProxies.parse(["10.0.0.0/8"])
    >>> client_key("203.0.113.7", [("x-forwarded-for", "198.51.100.1")], proxies)
    'ip:203.0.113.7'
    >>> client_key("10.0.0.2", [("x-forwarded-for", "1.2.3.4, 198.51.100.1, 10.0.0.9")], proxies)
    'ip:198.51.100.1'
    >>> client_key("2001:db8:1:2:3:4:5:6", [], proxies)
    'ip:2001:db8:1:2::/64'
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["FORWARDED", "PROXY_HEADERS", "X_FORWARDED_FOR", "TrustedProxies", "client_key", "forwarded_hops"]

X_FORWARDED_FOR = "x-forwarded-for"
FORWARDED = "forwarded"
PROXY_HEADERS = (X_FORWARDED_FOR, FORWARDED)
"""The headers a trusted proxy may report its client in (`KERNELINDEX_PROXY_HEADER`)."""

_FOR = re.compile(r'(?:^|;)\s*for\s*=\s*("(?:[^"\\]|\\.)*"|[^;,\s]*)', re.IGNORECASE)
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class TrustedProxies:
    """The networks whose peers' forwarded headers are believed, and which header they report clients in."""

    networks: tuple[_Network, ...] = ()
    header: str = X_FORWARDED_FOR

    @classmethod
    def parse(cls, cidrs: Iterable[str], header: str = X_FORWARDED_FOR) -> TrustedProxies:
        """Networks from CIDR text (`10.0.0.0/8`, `::1`, `127.0.0.1`).

        Raises:
            ValueError: a CIDR that is not one, or a header other than `PROXY_HEADERS`.
        """
        if header.lower() not in PROXY_HEADERS:
            raise ValueError(f"proxy header {header!r}: expected one of {', '.join(PROXY_HEADERS)}")
        networks = []
        for cidr in cidrs:
            try:
                networks.append(ipaddress.ip_network(cidr.strip(), strict=False))
            except ValueError:
                raise ValueError(f"trusted proxy {cidr!r}: expected an address or a CIDR (10.0.0.0/8)") from None
        return cls(tuple(networks), header.lower())

    def trusts(self, address: _Address | None) -> bool:
        return address is not None and any(address in network for network in self.networks)


def client_key(peer: str | None, headers: Sequence[tuple[str, str]], proxies: TrustedProxies) -> str:
    """The key of the client whose request came from `peer` with `headers` (lower-case names): `ip:<address>`
    (an IPv6 address's /64), or `peer:<text>` for a peer that is no address (a Unix socket)."""
    address = _address(peer)
    if address is None:
        return f"peer:{peer or 'unknown'}"
    if not proxies.trusts(address):
        return _key(address)
    hops = forwarded_hops([value for name, value in headers if name == proxies.header], proxies.header)
    for hop in reversed(hops):
        reported = _address(hop)
        if reported is None:  # "unknown" or an obfuscated name: the nearest trusted hop is all we know
            break
        address = reported
        if not proxies.trusts(reported):
            break
    return _key(address)


def forwarded_hops(values: Sequence[str], header: str) -> list[str]:
    """The addresses a forwarded header lists, leftmost first, ports and brackets removed (several header lines
    make one list, in order).

    >>> forwarded_hops(['for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"'], "forwarded")
    ['192.0.2.60', '2001:db8::17']
    >>> forwarded_hops(["1.2.3.4, 5.6.7.8:80", "9.9.9.9"], "x-forwarded-for")
    ['1.2.3.4', '5.6.7.8', '9.9.9.9']
    """
    hops: list[str] = []
    for value in values:
        if header == FORWARDED:
            for element in value.split(","):
                found = _FOR.search(element)
                hops.append(_bare(found.group(1).strip('"')) if found else "")
        else:
            hops.extend(_bare(item.strip()) for item in value.split(","))
    return hops


def _bare(text: str) -> str:
    """An address without its port or brackets (`[::1]:80` -> `::1`, `1.2.3.4:80` -> `1.2.3.4`)."""
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text
    if text.count(":") == 1:
        return text.split(":", 1)[0]
    return text


def _address(text: str | None) -> _Address | None:
    if not text:
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _key(address: _Address) -> str:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return f"ip:{address.ipv4_mapped}"
        return f"ip:{ipaddress.ip_network((address, 64), strict=False)}"
    return f"ip:{address}"
