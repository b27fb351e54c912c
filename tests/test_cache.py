"""kernelindex.core.cache.ByteLRU: bounded by what entries weigh, least recently used out first."""

from __future__ import annotations

from kernelindex.core.cache import ByteLRU, Representation


def _cache(max_bytes: int) -> ByteLRU[str, bytes]:
    return ByteLRU(max_bytes, len)


def test_it_holds_exactly_its_budget_and_evicts_the_least_recently_used() -> None:
    cache = _cache(800)
    for key in "abcdefgh":
        cache.put(key, b"x" * 100)
    assert len(cache) == 8 and cache.bytes == 800  # exactly at the budget: nothing goes
    assert cache.get("a") == b"x" * 100  # "a" is now the most recently used
    cache.put("i", b"y" * 100)  # 900 > 800: the least recently used ("b") goes
    assert cache.get("b") is None and cache.get("a") is not None and cache.bytes == 800
    cache.put("j", b"z" * 100)
    assert cache.get("c") is None and len(cache) == 8


def test_an_entry_over_an_eighth_of_the_budget_is_never_kept() -> None:
    cache = _cache(800)
    for key in "abcd":
        cache.put(key, b"x" * 100)
    cache.put("e", b"y" * 100)  # the largest entry kept is max_bytes // 8 = 100
    assert cache.bytes == 500
    cache.put("f", b"z" * 101)  # one byte over: never kept, nothing evicted for it
    assert cache.get("f") is None and cache.bytes == 500 and len(cache) == 5


def test_replacing_a_key_reweighs_it() -> None:
    cache = _cache(800)
    cache.put("a", b"x" * 100)
    cache.put("a", b"x" * 10)
    assert cache.bytes == 10 and len(cache) == 1 and cache.get("a") == b"x" * 10
    assert (cache.hits, cache.misses) == (1, 0)


def test_a_value_put_again_too_heavy_leaves_the_cache() -> None:
    """An answer grows once kept (its coded forms) and is put again to be weighed: past an eighth of the budget
    it goes, rather than stay weighed as it was."""
    cache = _cache(800)
    cache.put("a", b"x" * 100)
    cache.put("b", b"x" * 100)
    cache.put("a", b"x" * 101)
    assert cache.get("a") is None and cache.bytes == 100 and len(cache) == 1


def test_a_kept_value_grows_by_what_it_adds_up_to_an_eighth_of_the_budget() -> None:
    cache = _cache(800)
    kept = b"x" * 60
    cache.put("a", kept)
    cache.put("b", b"y" * 100)
    cache.grow("a", kept, 40)  # 100: exactly the largest entry kept
    assert cache.get("a") is kept and cache.bytes == 200
    cache.grow("a", kept, 1)  # 101: one byte over, it goes
    assert cache.get("a") is None and cache.bytes == 100 and len(cache) == 1
    cache.put("a", b"z" * 10)
    cache.grow("a", kept, 50)  # no longer the value kept there: nothing changes
    assert cache.bytes == 110


def test_growing_past_the_budget_evicts_the_least_recently_used() -> None:
    cache = _cache(1000)  # entries of up to 125
    values = {key: key.encode() * 100 for key in "abcdefghij"}
    for key, value in values.items():
        cache.put(key, value)
    assert cache.bytes == 1000 and len(cache) == 10  # at the budget
    cache.grow("j", values["j"], 1)  # 1,001: the least recently used ("a") goes
    assert cache.get("a") is None and cache.bytes == 901 and len(cache) == 9


def test_a_header_list_adds_what_weighing_the_answer_again_finds() -> None:
    """What `keep_wire` says it added is what the whole walk (`weight`) finds more, list after list, as the table
    that keeps them grows."""
    answer = Representation(b'{"data":{}}', "application/json", {"cache-control": "public, max-age=0"})
    for coding in (None, "br", "gzip", "zstd", "deflate", "identity", "x-one", "x-two", "x-three"):
        before = answer.weight()
        raw = ((b"content-type", b"application/json"), (b"content-length", str(len(coding or "")).encode()))
        added = answer.keep_wire((200, "application/json", coding), raw)
        assert added > 0 and answer.weight() - before == added
    assert answer.keep_wire((200, "application/json", None), ((b"a", b"b"),)) == 0  # kept already: no growth


def test_a_coding_adds_what_weighing_the_answer_again_finds() -> None:
    """What `Encodings.get` says a new coding added is what the whole walk (`weight`) finds more, coding after
    coding; a coding made before adds nothing."""
    answer = Representation(b'{"data":"' + b"x" * 5000 + b'"}', "application/json", {"cache-control": "no-store"})
    for coding in ("zstd", "br", "gzip"):
        before = answer.weight()
        coded, added = answer.encodings.get(answer.body, coding)
        assert coded != answer.body and added > len(coded)
        assert answer.weight() - before == added
    assert answer.encodings.get(answer.body, "br")[1] == 0
