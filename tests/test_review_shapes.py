"""The pull-request check's shape rules, each problem compared whole (path, JSON path, reason): what
may be added where, the 1 MiB limit at exactly 1,048,576 and 1,048,577 bytes, and the rules for the
policy file (docs/contributing.md: additions of regular files only, at `<kind-folder>/<hh>/<sha256-hex>.json`;
the policy a regular file, its content an allowed-signers file)."""

from __future__ import annotations

from typing import Any

import pygit2
from helpers import basic_scenario, commit_meta, digest_of, make_run, to_manifest
from signing import T0, Key, commit_raw, stored

from kernelindex import registry
from kernelindex.registry.errors import Problem
from kernelindex.registry.review import check_range
from kernelindex.registry.signatures import POLICY_PATH

BLOB = pygit2.enums.FileMode.BLOB
EXECUTABLE = pygit2.enums.FileMode.BLOB_EXECUTABLE
LINK = pygit2.enums.FileMode.LINK
SUBMODULE = pygit2.enums.FileMode.COMMIT
NEVER_CHANGE = "published files never change (a correction is a new manifest)"
LAYOUT = "outside the layout: manifests live at <kind-folder>/<hh>/<sha256-hex>.json"
MIB = 1024 * 1024  # docs/contributing.md and parse.MAX_DOCUMENT_BYTES: 1 MiB


def _new_run(name: str, latency: int) -> dict[str, Any]:
    scenario = basic_scenario()
    return make_run(
        scenario.implementations[1], scenario.workload, scenario.protocol, scenario.environment, latency, name=name
    )


def _hex(document: dict[str, Any]) -> str:
    return digest_of(document).removeprefix("sha256:")


def test_each_shape_rule_is_one_exact_problem(basic_store: registry.GitStore) -> None:
    scenario = basic_scenario()
    base = basic_store.head()
    assert base is not None
    edited_path, edited = stored(scenario.runs[0])
    deleted_path = stored(scenario.runs[1])[0]
    moved_path, moved = stored(scenario.workload)
    executable_path, executable = stored(_new_run("executable", 7100))
    fanout_run = _new_run("fan-out", 7200)
    fanout_hex = _hex(fanout_run)
    wrong_hh = "00" if not fanout_hex.startswith("00") else "01"
    misplaced_run = _new_run("misplaced", 7300)
    misplaced_path, misplaced = stored(misplaced_run)
    elsewhere = "benchmark-runs/ff/" + "f" * 64 + ".json"
    renamed_to = "workload-cases/00/moved.json"
    files: dict[str, bytes | tuple[bytes, pygit2.enums.FileMode] | None] = {
        edited_path: edited.replace(b"\n", b"\n ", 1),  # same path, new bytes
        deleted_path: None,
        moved_path: None,
        renamed_to: moved,  # the same blob at a new path: a rename
        "benchmark-runs/ab/link.json": (b"../x", LINK),
        "benchmark-runs/cd/sub": (base.encode(), SUBMODULE),
        executable_path: (executable, EXECUTABLE),
        "no-such-kind/ab/" + "a" * 62 + "ab.json": b"{}\n",  # a folder that is no kind
        "benchmark-runs/ab/" + "A" * 64 + ".json": b"{}\n",  # upper-case hex
        "benchmark-runs/ab/" + "a" * 63 + ".json": b"{}\n",  # 63 digits
        "benchmark-runs/ab/" + "a" * 64 + ".yaml": b"{}\n",  # not .json
        f"benchmark-runs/{wrong_hh}/{fanout_hex}.json": stored(fanout_run)[1],
        elsewhere: misplaced,
    }
    head = commit_raw(basic_store, base, files)
    problems = check_range(basic_store, base, head).problems
    expected = [
        Problem(edited_path, "", f"modified: {NEVER_CHANGE}"),
        Problem(deleted_path, "", f"deleted: {NEVER_CHANGE}"),
        Problem(moved_path, "", f"deleted: {NEVER_CHANGE}"),
        Problem(renamed_to, "", f"renamed from {moved_path}: published files never move"),
        Problem("benchmark-runs/ab/link.json", "", "a symbolic link: only regular files may be added"),
        Problem("benchmark-runs/cd/sub", "", "a submodule: only regular files may be added"),
        Problem(executable_path, "", "file mode 100755: manifests are regular, non-executable files (100644)"),
        Problem("no-such-kind/ab/" + "a" * 62 + "ab.json", "", LAYOUT),
        Problem("benchmark-runs/ab/" + "A" * 64 + ".json", "", LAYOUT),
        Problem("benchmark-runs/ab/" + "a" * 63 + ".json", "", LAYOUT),
        Problem("benchmark-runs/ab/" + "a" * 64 + ".yaml", "", LAYOUT),
        Problem(
            f"benchmark-runs/{wrong_hh}/{fanout_hex}.json",
            "",
            f"in the wrong fan-out folder: expected benchmark-runs/{fanout_hex[:2]}/",
        ),
        Problem(elsewhere, "", f"a BenchmarkRun with digest {digest_of(misplaced_run)} belongs at {misplaced_path}"),
    ]
    assert sorted(problems, key=repr) == sorted(expected, key=repr)


def test_a_refused_file_does_not_stop_the_check_of_the_next(basic_store: registry.GitStore) -> None:
    """Files that do not parse, sit at another digest's path or are not in the stored form are each
    reported, and every file after them (git lists paths in order) is still checked and added."""
    base = basic_store.head()
    assert base is not None
    broken = "benchmark-runs/00/" + "0" * 63 + "1.json"
    misplaced_run = _new_run("misplaced", 7300)
    misplaced = "benchmark-runs/00/" + "0" * 63 + "2.json"
    respelled_run = _new_run("respelled", 7400)
    respelled_path, respelled = stored(respelled_run)
    later = [r for r in (_new_run(f"later-{i}", 8000 + i) for i in range(12)) if stored(r)[0] > respelled_path]
    assert later  # at least one file that git lists after the respelled one
    files: dict[str, bytes | tuple[bytes, pygit2.enums.FileMode] | None] = {
        broken: b'{"kind": \n',
        misplaced: stored(misplaced_run)[1],
        respelled_path: respelled.rstrip(b"\n"),
        **dict(stored(r) for r in later),
    }
    head = commit_raw(basic_store, base, files)
    report = check_range(basic_store, base, head)
    assert report.base == base and report.head == head and report.commits == 1
    assert [p.source for p in report.problems] == [broken, misplaced, respelled_path]
    assert report.problems[2] == Problem(
        respelled_path,
        "",
        "not in the stored form (sorted keys, 2-space indent, normalized values, trailing newline); "
        "write it with `kernelindex add`",
    )
    assert sorted(m.digest for m in report.added) == sorted(digest_of(r) for r in later)


def test_a_mode_change_names_both_modes(basic_store: registry.GitStore) -> None:
    base = basic_store.head()
    assert base is not None
    path, data = stored(basic_scenario().implementations[0])
    head = commit_raw(basic_store, base, {path: (data, EXECUTABLE)})
    assert check_range(basic_store, base, head).problems == (
        Problem(path, "", "mode changed from 100644 to 100755: published files never change"),
    )


def test_the_document_limit_sits_at_exactly_one_mebibyte(basic_store: registry.GitStore) -> None:
    """1,048,576 bytes are read (and refused for what they say: here, not a manifest); 1,048,577 are
    refused unread, with their size, by the check itself."""
    base = basic_store.head()
    assert base is not None
    path = "benchmark-runs/ab/" + "ab" * 32 + ".json"
    at_limit = b"{}" + b" " * (MIB - 3) + b"\n"
    assert len(at_limit) == 1_048_576
    read = check_range(basic_store, base, commit_raw(basic_store, base, {path: at_limit})).problems
    assert read and all(p.source == path for p in read)
    assert not any("limit" in p.reason for p in read), read
    over = at_limit + b" "
    assert len(over) == 1_048_577
    refused = check_range(basic_store, base, commit_raw(basic_store, base, {path: over})).problems
    assert refused == (Problem(path, "", "the stored form is 1,048,577 bytes; the limit is 1,048,576 bytes (1 MiB)"),)


def test_a_manifest_that_does_not_parse_is_reported_at_its_path(basic_store: registry.GitStore) -> None:
    base = basic_store.head()
    assert base is not None
    path = "benchmark-runs/ab/" + "ab" * 32 + ".json"
    head = commit_raw(basic_store, base, {path: b'{"kind": "BenchmarkRun",\n'})
    problems = check_range(basic_store, base, head).problems
    assert len(problems) == 1 and problems[0].source == path and problems[0].path == ""
    assert "JSON" in problems[0].reason and "line 2" in problems[0].reason, problems


# The policy file ------------------------------------------------------------------------------------


def _governed(store: registry.GitStore, alice: Key) -> str:
    result = store.add(
        [to_manifest(d) for d in basic_scenario().docs],
        commit_meta(T0, subject="Initial policy and data", source="test"),
        extra_files={POLICY_PATH: alice.allowed_signer},
    )
    assert result.commit is not None
    return result.commit


REGULAR_ONLY = "the policy must be a regular file (100644)"


def test_the_policy_must_stay_a_regular_file(store: registry.GitStore, keys: dict[str, Key]) -> None:
    alice = keys["alice"]
    base = _governed(store, alice)
    edited = alice.allowed_signer + b"# edited\n"
    for mode in (EXECUTABLE, LINK):
        head = commit_raw(store, base, {POLICY_PATH: (edited, mode)})
        assert check_range(store, base, head, signatures=False).problems == (Problem(POLICY_PATH, "", REGULAR_ONLY),)
    same = commit_raw(store, base, {POLICY_PATH: (alice.allowed_signer, EXECUTABLE)})  # the mode alone
    assert check_range(store, base, same, signatures=False).problems == (
        Problem(POLICY_PATH, "", "mode changed from 100644 to 100755: published files never change"),
    )
    deleted = commit_raw(store, base, {POLICY_PATH: None})
    assert check_range(store, base, deleted, signatures=False).ok  # a local registry may drop its policy


def test_a_first_policy_must_be_a_regular_file_and_parse(basic_store: registry.GitStore, keys: dict[str, Key]) -> None:
    """A policy added where there was none: as a link it is refused as a policy (not as a stray
    link); as a regular file its content is read."""
    alice = keys["alice"]
    base = basic_store.head()
    assert base is not None
    link = commit_raw(basic_store, base, {POLICY_PATH: (alice.allowed_signer, LINK)})
    assert check_range(basic_store, base, link, signatures=False).problems == (Problem(POLICY_PATH, "", REGULAR_ONLY),)
    fine = commit_raw(basic_store, base, {POLICY_PATH: alice.allowed_signer})
    assert check_range(basic_store, base, fine, signatures=False).ok
    broken = commit_raw(basic_store, base, {POLICY_PATH: b"alice@example.com nonsense\n"})
    assert check_range(basic_store, base, broken, signatures=False).problems == (
        Problem(
            POLICY_PATH, "", "policy/maintainers:1: not an allowed-signers line (principals [options] keytype key)"
        ),
    )


def test_with_signatures_a_policy_change_is_judged_once(store: registry.GitStore, keys: dict[str, Key]) -> None:
    """Signatures on: a policy change that does not parse is one problem, the trust chain's (which
    reads the new policy before judging who signed it), not a second one from the shape check."""
    base = _governed(store, keys["alice"])
    head = commit_raw(store, base, {POLICY_PATH: b"alice@example.com nonsense\n"})
    assert check_range(store, base, head).problems == (
        Problem(
            POLICY_PATH, "", "policy/maintainers:1: not an allowed-signers line (principals [options] keytype key)"
        ),
    )
