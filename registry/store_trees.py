"""Raw git tree objects, parsed: `<octal mode> <name>\\0<20-byte id>` repeated, as git stores them.

The store reads trees as bytes (libgit2's object database, or `git cat-file --batch`) and parses them here rather
than through pygit2's entry objects, several times faster when a history or a diff reads thousands of trees.
A fan-out tree of a manifest folder (`<kind-folder>/<hh>`) holds entries of one size, `100644 <64 hex>.json\\0<id>`
(`FAN_ITEM` bytes each), which are sliced without a parse loop where the shape is proven first.
"""

from __future__ import annotations

import hashlib

__all__ = [
    "FAN_ITEM",
    "FILE_MODE",
    "TREE_MODE",
    "canonical_mode",
    "fan_out_items",
    "fan_out_shaped",
    "parse_tree",
    "tree_entry",
    "tree_hash",
    "tree_items",
]

TREE_MODE = 0o040000
FILE_MODE = 0o100644
FAN_ITEM = 97  # len("100644 ") + 64 + len(".json") + 1 + 20


def parse_tree(data: bytes) -> list[tuple[int, str, str]]:
    """(mode, name, object id) of each entry of a raw tree object, in the tree's order.

    Raises:
        ValueError: the bytes end inside an entry.
        UnicodeDecodeError: a name is not UTF-8.
    """
    entries = []
    position = 0
    end = len(data)
    while position < end:
        space = data.index(b" ", position)
        nul = data.index(b"\0", space)
        entries.append((int(data[position:space], 8), data[space + 1 : nul].decode(), data[nul + 1 : nul + 21].hex()))
        position = nul + 21
    return entries


def tree_items(data: bytes) -> frozenset[bytes]:
    """A raw tree's entries as raw items, `<mode> <name>\\0<20-byte id>` each: two trees' items
    compare as sets (what one has that the other lacks) without parsing either."""
    found = []
    position, end = 0, len(data)
    while position < end:
        nul = data.index(b"\0", position)
        found.append(data[position : nul + 21])
        position = nul + 21
    return frozenset(found)


def fan_out_items(data: bytes) -> frozenset[bytes]:
    """`tree_items`, sliced without a parse loop when every entry is `100644 <64>.json\\0<20>` (checked by
    strided slices, loops in C); parsed otherwise."""
    size = FAN_ITEM
    count, rest = divmod(len(data), size)
    if not rest and data[6::size].count(32) == data[71::size].count(46) == data[76::size].count(0) == count:
        return frozenset([data[i : i + size] for i in range(0, len(data), size)])
    return tree_items(data)


def tree_entry(item: bytes) -> tuple[bytes, int, str, str]:
    """(sort key, mode as git reads it, name, object id) of one raw tree item. The key orders
    entries as git does: a subtree as if its name ended in `/`."""
    space = item.index(b" ")
    nul = item.index(b"\0", space)
    mode = canonical_mode(int(item[:space], 8))
    name = item[space + 1 : nul]
    key = name + b"/" if mode == TREE_MODE else name
    return key, mode, name.decode("utf-8", errors="surrogateescape"), item[nul + 1 :].hex()


def canonical_mode(mode: int) -> int:
    """A tree entry's mode as git reads it (`canon_mode`): a regular file is 100644 or 100755 by
    its owner's execute bit, anything that is not a file, link or tree a submodule."""
    kind = mode & 0o170000
    if kind == 0o100000:
        return 0o100755 if mode & 0o100 else 0o100644
    if kind in (0o120000, TREE_MODE):
        return kind
    return 0o160000


def fan_out_shaped(data: bytes, count: int) -> bool:
    """Whether a raw tree starts with `count` entries `100644 <64 bytes>.json\\0<20-byte id>`, git
    reading each at its place: checked by strided slices (loops in C), not entry by entry. A name
    holding a NUL would end early, so the NULs of the names are counted: all of those entries' but
    those that end each name and those inside the ids."""
    size = FAN_ITEM
    end = count * size
    if len(data) < end:
        return False
    for offset, byte in enumerate(b"100644 "):
        if data[offset:end:size].count(byte) != count:
            return False
    for offset, byte in enumerate(b".json\0", start=71):
        if data[offset:end:size].count(byte) != count:
            return False
    in_ids = sum(data[offset:end:size].count(0) for offset in range(77, 97))
    return data.count(0, 0, end) == count + in_ids


def tree_hash(data: bytes) -> str:
    """The id git gives a tree object of these bytes (SHA-1 of `tree <size>\\0` and the bytes)."""
    return hashlib.sha1(b"tree %d\0" % len(data) + data).hexdigest()
