"""Compare as a file: the compare page's table as CSV (RFC 4180, the csv module) and as Markdown (a GFM table),
made from the same GraphQL answer the page shows.

Every cell may hold a contributor's text, so both formats treat cells as hostile:

- **CSV**: a spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` as a formula (and tab and
  carriage return can smuggle one in: OWASP's list). Such a cell gets a leading `'`, which spreadsheets show as
  text and do not run. Quoting and line breaks are the csv module's.
- **Markdown**: every ASCII punctuation character of a cell is backslash-escaped (CommonMark, section 2.4:
  any of them may be, and then stands for itself), so no cell opens a link, an image, HTML, code, emphasis
  or a new column (`|`); a line break in a cell becomes a space, so no cell opens a new row.

>>> csv_cell("=1+1"), csv_cell("-2"), csv_cell("144.6 µs"), csv_cell(None)
("'=1+1", "'-2", '144.6 µs', '')
>>> markdown_cell("a|b <i>[x](y)</i>")
'a\\\\|b \\\\<i\\\\>\\\\[x\\\\]\\\\(y\\\\)\\\\<\\\\/i\\\\>'
"""

from __future__ import annotations

import io
import re
import string
from typing import Any

__all__ = ["CSV", "MARKDOWN", "compare_csv", "compare_markdown", "csv_cell", "markdown_cell"]

CSV = "text/csv; charset=utf-8; header=present"
MARKDOWN = "text/markdown; charset=utf-8"

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def csv_cell(value: Any) -> str:
    """A value as a CSV cell that no spreadsheet runs as a formula (None is empty)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def markdown_cell(value: Any) -> str:
    """A value as the text of a Markdown table cell that stands for itself (None is an em dash)."""
    text = "—" if value is None else str(value)
    return _PUNCTUATION.sub(r"\\\1", _LINE_BREAK.sub(" ", text))


def _table(found: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The header and rows both formats write: the runs' identity first, then each field the page shows,
    in its order (material differences first), each with whether the runs agree and whether it is material."""
    runs = found["runs"]
    ranks = {entry["run"]["digest"]: entry["rank"] for entry in found["entries"] or ()}
    header = ["field", *(run["name"] for run in runs), "same", "material"]
    rows: list[list[Any]] = [
        ["run", *(run["digest"] for run in runs), "", ""],
        [
            "implementation name",
            *(run["implementation"]["displayName"] if run["implementation"] else None for run in runs),
            "",
            "",
        ],
    ]
    if found["entries"]:
        rows.append(["rank", *(ranks.get(run["digest"]) for run in runs), "", ""])
    ordered = sorted(found["rows"], key=lambda row: (not row["material"] or row["same"], row["same"]))
    for row in ordered:
        rows.append([row["field"], *row["values"], "yes" if row["same"] else "no", "yes" if row["material"] else "no"])
    return header, rows


def compare_csv(found: dict[str, Any]) -> bytes:
    """The compare answer (`registry.compare`) as CSV: one column per run."""
    import csv  # here: the CSV download is the one answer that writes it

    header, rows = _table(found)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([csv_cell(cell) for cell in header])
    writer.writerows([csv_cell(cell) for cell in row] for row in rows)
    return out.getvalue().encode()


def compare_markdown(found: dict[str, Any], commit: str, committed_at: str, page_url: str) -> bytes:
    """The compare answer as a Markdown document: what it compares, as of which commit, then the table."""
    header, rows = _table(found)
    lines = [
        f"# Compare {len(found['runs'])} runs",
        "",
        f"As of commit `{commit}` ({committed_at[:10]}). The page: <{page_url}>"
        if page_url.startswith("http")
        else f"As of commit `{commit}` ({committed_at[:10]}).",
        "",
    ]
    if found["material"]:
        fields = ", ".join(markdown_cell(field) for field in found["material"])
        lines += [f"Not comparable: they differ in {fields}. Runs rank only inside one comparison group.", ""]
    elif found["sameCohort"]:
        lines += ["All in one comparison group: ranked.", ""]
    lines.append("| " + " | ".join(markdown_cell(cell) for cell in header) + " |")
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(markdown_cell(cell) for cell in row) + " |" for row in rows]
    return ("\n".join(lines) + "\n").encode()
