"""Normalization before hashing: durations to integer nanoseconds, set-like lists only."""

from __future__ import annotations

import pytest
from helpers import make_implementation, make_operation, make_protocol, make_run, to_manifest

from kernelindex import registry
from kernelindex.registry.normalize import SET_LIKE_SUPPORT_FIELDS, duration_ns


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0),
        (8000, 8000),
        ("8000 ns", 8000),
        ("8000ns", 8000),
        ("8 us", 8000),
        ("8µs", 8000),
        ("8 µs", 8000),
        ("0.008 ms", 8000),
        ("0.000008 s", 8000),
        ("8.120 us", 8120),
        ("1 s", 1_000_000_000),
        ("0 ns", 0),
        ("0.5 us", 500),
        ("9007199254740991 ns", 2**53 - 1),
        (2**53 - 1, 2**53 - 1),
        ("00012 ns", 12),
    ],
    ids=repr,
)
def test_durations(value: int | str, expected: int) -> None:
    result = duration_ns(value, "$.x")
    assert result == expected
    assert type(result) is int


@pytest.mark.parametrize(
    "value",
    [
        "1.5 ns",  # not a whole number of ns
        "0.0000000001 s",
        "9007199254740992 ns",  # past 2^53 - 1
        2**53,
        -1,
        "-8 ns",
        "8 ms ",
        " 8 ms",
        "8  ms",
        "8 MS",
        "8 sec",
        "8 \u03bcs",  # Greek mu: the pattern names the micro sign U+00B5, as upstream's does
        "8e3 ns",
        "8",
        ".5 us",
        "5. us",
        "",
        8.5,
        True,
        None,
    ],
    ids=repr,
)
def test_bad_durations(value: object) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the message varies; InvalidManifest covers the text
        duration_ns(value, "$.x")


def test_every_latency_statistic_and_the_interval_are_normalized() -> None:
    operation = make_operation("op")
    run = make_run(make_implementation(operation), "sha256:" + "1" * 64, make_protocol(), "sha256:" + "2" * 64, "8 us")
    latency = run["spec"]["timing"]["latencyNs"]
    latency.update(mean="8.1 us", p05="7 us", p95="0.009 ms", minimum="6.5 us", maximum="10 us", mad="120 ns")
    latency["confidence95"] = ["7.9 us", "8.3 us"]
    normalized = to_manifest(run).document["spec"]["timing"]["latencyNs"]
    assert normalized == {
        "median": 8000,
        "mean": 8100,
        "p05": 7000,
        "p95": 9000,
        "minimum": 6500,
        "maximum": 10000,
        "mad": 120,
        "confidence95": [7900, 8300],
    }


def test_every_problem_of_a_document_is_reported() -> None:
    run = make_run("sha256:" + "1" * 64, "sha256:" + "2" * 64, "sha256:" + "3" * 64, "sha256:" + "4" * 64, "1.5 ns")
    run["spec"]["timing"]["latencyNs"]["p95"] = "0.1 ns"
    with pytest.raises(registry.InvalidManifest) as caught:
        to_manifest(run, "run.json")
    assert [p.path for p in caught.value.problems] == [
        "$.spec.timing.latencyNs.median",
        "$.spec.timing.latencyNs.p95",
    ]


def test_warmup_duration_and_attestation_observed_ns() -> None:
    protocol = make_protocol()
    protocol["spec"]["measurement"]["warmupDuration"] = "2.5 ms"
    assert to_manifest(protocol).document["spec"]["measurement"]["warmupDuration"] == 2_500_000
    from helpers import make_attestation

    attestation = make_attestation("sha256:" + "1" * 64)
    attestation["spec"]["observedNs"] = "8.2 us"
    assert to_manifest(attestation).document["spec"]["observedNs"] == 8200


def test_only_the_support_lists_are_sets() -> None:
    assert SET_LIKE_SUPPORT_FIELDS == ("hardwareArchitectures", "productsTested", "axes", "dtypes", "layouts")
    implementation = make_implementation(make_operation("op"), architectures=["sm_90", "sm_80", "sm_90"])
    implementation["spec"]["buildVariants"] = [
        {"name": "z", "install": {"kind": "pip", "package": "z"}},
        {"name": "a", "install": {"kind": "pip", "package": "a"}},
    ]
    document = to_manifest(implementation).document
    assert document["spec"]["support"]["hardwareArchitectures"] == ["sm_80", "sm_90"]
    assert [v["name"] for v in document["spec"]["buildVariants"]] == ["z", "a"]
    operation = to_manifest(make_operation("op")).document
    assert [a["name"] for a in operation["spec"]["inputs"]] == ["input", "epsilon"]
    assert operation["spec"]["inputs"][0]["tensor"]["shape"] == ["tokens", "hidden"]


def test_timestamps_stay_as_written() -> None:
    run = make_run("sha256:" + "1" * 64, "sha256:" + "2" * 64, "sha256:" + "3" * 64, "sha256:" + "4" * 64, 1)
    run["spec"]["observedAt"] = "2026-08-01T12:00:00.500Z"
    assert to_manifest(run).document["spec"]["observedAt"] == "2026-08-01T12:00:00.500Z"
