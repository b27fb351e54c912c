"""wrk, the HTTP load generator: a Lua script that cycles through requests, and its report parsed."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["VARY", "Histogram", "Request", "percentile", "read_histogram", "run_wrk", "wrk_script"]

Request = tuple[str, str, str | None]
"""(method, path, JSON body or None)."""

Histogram = dict[int, int]
"""Latencies as wrk recorded them: microseconds -> how many requests took that long."""


VARY = "VARY_DATE"
"""In a body, replaced by a different date at each request (2000-01-01 onwards, a day per round of the
requests): with `vary`, no two requests are the same, so no answer comes from a cache."""


def wrk_script(
    requests: list[Request], folder: Path | None = None, *, vary: bool = False, histogram: Path | None = None
) -> Path:
    """A wrk script sending `requests` round-robin, one after the other on each connection (written in
    `folder`, else the temporary directory). With `histogram`, wrk writes there, when it ends, every latency
    it recorded (see `read_histogram`), so that several runs' percentiles can be taken together."""
    lines = ["local requests = {"]
    for method, path, body in requests:
        lines.append(f"  {{{json.dumps(method)}, {json.dumps(path)}, {json.dumps(body) if body else 'nil'}}},")
    lines.append("}")
    lines.append("local i = 0")
    lines.append("request = function()")
    lines.append("  i = i + 1")
    lines.append("  local r = requests[(i % #requests) + 1]")
    lines.append("  local body = r[3]")
    if vary:
        lines.append("  local day = math.floor(i / #requests) % 36500")
        lines.append(f'  body = string.gsub(body, "{VARY}", os.date("!%Y-%m-%d", 946684800 + day * 86400))')
    lines.append('  return wrk.format(r[1], r[2], {["Content-Type"] = "application/json"}, body)')
    lines.append("end")
    if histogram is not None:
        # wrk's statistics object: `#latency` distinct values, `latency(i)` the i-th value (us) and its count.
        lines.append("done = function(summary, latency, requests)")
        lines.append(f"  local out = io.open({json.dumps(str(histogram))}, 'w')")
        lines.append("  for i = 1, #latency do")
        lines.append("    local value, count = latency(i)")
        lines.append("    out:write(string.format('%d %d\\n', value, count))")
        lines.append("  end")
        lines.append("  out:close()")
        lines.append("end")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False, dir=folder) as handle:
        handle.write("\n".join(lines) + "\n")
    return Path(handle.name)


def run_wrk(
    url: str, script: Path, seconds: float, *, connections: int = 32, meanwhile: Callable[[], None] | None = None
) -> dict[str, float]:
    """Requests/s, p99 in ms, errors (non-2xx/3xx answers and socket errors, also by kind when any) and
    requests sent.

    With `meanwhile`, the load runs while it does (at most `seconds`), then stops (wrk reports on SIGINT).
    """
    process = subprocess.Popen(
        ["wrk", "-t", "2", "-c", str(connections), "-d", f"{max(1, round(seconds))}s", "--timeout", "30s",
         "--latency", "-s", str(script), url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        if meanwhile is not None:
            meanwhile()
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        output, errors_text = process.communicate(timeout=seconds + 60)
    except BaseException:
        process.kill()
        process.wait()
        raise
    if process.returncode not in (0, -signal.SIGINT):
        raise RuntimeError(f"wrk exited with {process.returncode}: {errors_text[-500:]}")
    rps = p99 = 0.0
    errors = requests = 0
    kinds: dict[str, float] = {}  # errors by kind: non2xx, connect, read, write, timeout
    for line in output.splitlines():
        words = line.split()
        if line.startswith("Requests/sec:"):
            rps = float(words[1])
        elif words[:1] == ["99%"]:
            p99 = _milliseconds(words[1])
        elif "requests in" in line:
            requests = int(words[0])
        elif line.strip().startswith("Non-2xx or 3xx responses:"):
            errors += int(words[-1])
            kinds["non2xx"] = int(words[-1])
        elif line.strip().startswith("Socket errors:"):
            for part in line.split(":", 1)[1].split(","):
                kind, count = part.split()
                kinds[kind] = int(count)
                errors += int(count)
    return {"rps": rps, "p99": p99, "errors": errors, "requests": requests, **kinds}


def _milliseconds(text: str) -> float:
    for suffix, factor in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def read_histogram(path: Path) -> Histogram:
    """The latencies a script made with `histogram=path` wrote."""
    found: Histogram = {}
    for line in path.read_text().splitlines():
        value, count = line.split()
        found[int(value)] = found.get(int(value), 0) + int(count)
    return found


def percentile(histograms: list[Histogram], p: float) -> float:
    """The `p`th percentile (0-100), in ms, of the latencies of all `histograms` taken together, by wrk's own
    rule (`stats_percentile`: the least value whose running count reaches round(p% of the count + 0.5))."""
    pooled: Histogram = {}
    for histogram in histograms:
        for value, count in histogram.items():
            pooled[value] = pooled.get(value, 0) + count
    total = sum(pooled.values())
    if total == 0:
        return float("nan")
    wanted = math.floor(total * p / 100 + 1.0)  # C's round(x + 0.5) for x >= 0
    seen = 0
    for value in sorted(pooled):
        seen += pooled[value]
        if seen >= wanted:
            return value / 1e3
    return max(pooled) / 1e3
