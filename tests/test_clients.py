"""Who a client is (kernelindex.core.clients): the peer, or behind a trusted proxy the address it reports; a forwarded
header from anyone else changes nothing."""

from __future__ import annotations

import pytest

from kernelindex.core.clients import TrustedProxies, client_key
from kernelindex.core.settings import Settings

PROXIES = TrustedProxies.parse(["10.0.0.0/8", "::1"])
RFC7239 = TrustedProxies.parse(["10.0.0.0/8"], "Forwarded")

CASES = [
    # (peer, headers, proxies, key)
    ("203.0.113.7", [], PROXIES, "ip:203.0.113.7"),
    # a forged header from an untrusted peer: ignored, in either spelling
    ("203.0.113.7", [("x-forwarded-for", "198.51.100.1")], PROXIES, "ip:203.0.113.7"),
    ("203.0.113.7", [("forwarded", "for=198.51.100.1")], RFC7239, "ip:203.0.113.7"),
    # a trusted proxy's report: the rightmost address that is not a trusted proxy
    ("10.0.0.2", [("x-forwarded-for", "198.51.100.1")], PROXIES, "ip:198.51.100.1"),
    ("10.0.0.2", [("x-forwarded-for", "6.6.6.6, 198.51.100.1, 10.1.1.1")], PROXIES, "ip:198.51.100.1"),
    (
        "10.0.0.2",
        [("x-forwarded-for", "6.6.6.6"), ("x-forwarded-for", "198.51.100.1:4711")],
        PROXIES,
        "ip:198.51.100.1",
    ),
    ("::1", [("x-forwarded-for", "198.51.100.1")], PROXIES, "ip:198.51.100.1"),
    # the header the proxy does not set is never read: a client's forgery passes through it untouched
    ("10.0.0.2", [("forwarded", "for=6.6.6.6"), ("x-forwarded-for", "198.51.100.1")], PROXIES, "ip:198.51.100.1"),
    (
        "10.0.0.2",
        [("x-forwarded-for", "6.6.6.6"), ("forwarded", 'for="[2001:db8::1]:80"')],
        RFC7239,
        "ip:2001:db8::/64",
    ),
    # nothing reported, only proxies, or a name: the nearest trusted hop
    ("10.0.0.2", [], PROXIES, "ip:10.0.0.2"),
    ("10.0.0.2", [("x-forwarded-for", "10.0.0.3, 10.0.0.4")], PROXIES, "ip:10.0.0.3"),
    ("10.0.0.2", [("x-forwarded-for", "6.6.6.6, unknown")], PROXIES, "ip:10.0.0.2"),
    ("10.0.0.2", [("forwarded", "for=_hidden, for=10.0.0.5")], RFC7239, "ip:10.0.0.5"),
    # an IPv6 client is its /64; an IPv4-mapped address is the IPv4 one
    ("2001:db8:1:2:3:4:5:6", [], PROXIES, "ip:2001:db8:1:2::/64"),
    ("::ffff:192.0.2.1", [], PROXIES, "ip:192.0.2.1"),
    (None, [], PROXIES, "peer:unknown"),
]


@pytest.mark.parametrize(("peer", "headers", "proxies", "key"), CASES)
def test_a_client_is_its_peer_or_what_a_trusted_proxy_reports(
    peer: str | None, headers: list[tuple[str, str]], proxies: TrustedProxies, key: str
) -> None:
    assert client_key(peer, headers, proxies) == key


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"KERNELINDEX_TRUSTED_PROXIES": "10.0.0.0/33"}, "10.0.0.0/33"),
        ({"KERNELINDEX_TRUSTED_PROXIES": "10.0.0.1", "KERNELINDEX_PROXY_HEADER": "x-real-ip"}, "x-real-ip"),
    ],
)
def test_a_bad_proxy_setting_fails_at_start(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Settings.from_env(environ)


def test_the_settings_read_the_proxies_and_their_header() -> None:
    settings = Settings.from_env(
        {"KERNELINDEX_TRUSTED_PROXIES": "10.0.0.0/8, ::1", "KERNELINDEX_PROXY_HEADER": "Forwarded"}
    )
    assert settings.proxies() == TrustedProxies.parse(["10.0.0.0/8", "::1"], "forwarded")
    assert Settings.from_env({}).proxies() == TrustedProxies()
