"""The named GraphQL documents the commands read with (`api.cli.ask`): ordinary queries a frontend developer
could send, each pinned by `$at` (null: the served head of main), as the pages' documents are."""

from __future__ import annotations

from api.cli.ask import Document

__all__ = ["CITE", "LOOKUP_COHORT", "LOOKUP_OPERATION"]

_COMMIT = "commit { id }"
# What a contributor reuses by digest: the workload, protocol and environment a cohort compares under.
_PARTS = """
  workload { digest name title label }
  protocol { digest name title harness }
  environment { digest name title gpu }
"""

LOOKUP_OPERATION = Document(
    "LookupOperation",
    f"""
query LookupOperation($at: String, $id: String!, $after: String) {{
  registry(at: $at) {{
    {_COMMIT}
    operation(id: $id) {{
      digest name title family runCount
      cohorts(first: 100, after: $after) {{
        totalCount
        pageInfo {{ hasNextPage endCursor }}
        edges {{ node {{ key size {_PARTS} }} }}
      }}
    }}
    matching: operations(search: $id, first: 5) {{ edges {{ node {{ name title }} }} }}
  }}
}}
""",
)
"""An operation (digest, prefix or name) with its cohorts, 100 a page (`$after`), each with what it compares under."""

LOOKUP_COHORT = Document(
    "LookupCohort",
    f"""
query LookupCohort($at: String, $key: String!) {{
  registry(at: $at) {{
    {_COMMIT}
    cohort(key: $key) {{
      key size rankedCount metricKey
      operation {{ digest name title }}
      {_PARTS}
    }}
  }}
}}
""",
)
"""A cohort (its key or a unique prefix of 12 hex digits or more) and what it compares under."""

CITE = Document(
    "Cite",
    """
query Cite($at: String, $id: String!, $format: CitationFormat!) {
  registry(at: $at) {
    commit { id }
    run(id: $id) { citation(format: $format) }
    servingRun(id: $id) { citation(format: $format) }
  }
}
""",
)
"""A kernel or serving run's citation (digest, prefix or name) in a format, pinned to the commit that answers."""
