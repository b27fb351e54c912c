"""`kernelindex.registry.lazymap.LazyMap`: decoding every bucket in slices, as a server's background pass does after a warm
start (pausing for the requests in flight), gives the same mapping as decoding on first read."""

from __future__ import annotations

import pytest

from kernelindex.registry.lazymap import LazyMap, bucket_count, write_buckets


def _lazy(size: int) -> tuple[LazyMap[int], dict[str, int]]:
    rows = {f"key-{i}": i for i in range(size)}
    body = bytearray()

    def write(blob: bytes) -> int:
        body.extend(blob)
        return len(blob)

    count, spans = write_buckets(rows, write)
    return LazyMap(bytes(body), spans, count), rows


@pytest.mark.parametrize(
    ("buckets", "pauses"),
    [(15, 0), (16, 1), (17, 1), (32, 2), (33, 2)],  # a pause after each full slice of 16 decoded buckets
)
def test_decoding_all_pauses_after_each_slice_of_16_buckets(buckets: int, pauses: int) -> None:
    lazy, rows = _lazy(buckets * 48)
    assert bucket_count(len(rows)) == buckets
    called: list[int] = []
    lazy.decode_all(lambda: called.append(1))
    assert len(called) == pauses
    assert lazy.complete and dict(lazy.items()) == rows


def test_buckets_already_read_are_not_decoded_again_nor_counted() -> None:
    lazy, rows = _lazy(17 * 48)
    assert lazy["key-0"] == 0  # a request read one key first: its bucket is decoded
    called: list[int] = []
    lazy.decode_all(lambda: called.append(1))
    assert len(called) == 1  # 16 buckets left to decode: one full slice
    assert lazy.complete and dict(lazy.items()) == rows


def test_a_complete_map_answers_without_its_buffer() -> None:
    lazy, rows = _lazy(3 * 48)
    assert not lazy.complete
    lazy.decode_all()
    assert lazy.complete
    assert lazy["key-7"] == 7 and lazy.get("absent") is None and "absent" not in lazy and len(lazy) == len(rows)
    with pytest.raises(KeyError):
        lazy["absent"]
