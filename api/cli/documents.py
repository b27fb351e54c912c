"""The named GraphQL documents the commands read with (`kernelindex.cli.ask`): ordinary queries a frontend developer
could send, each pinned by `$at` (null: the served head of main), as the pages' documents are."""

from __future__ import annotations

from kernelindex.cli.ask import Document

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
query Cite($at: String, $id: String!, $format: CitationFormat!, $accessed: String) {
  registry(at: $at) {
    commit { id }
    run(id: $id) { citation(format: $format, accessed: $accessed) }
    servingRun(id: $id) { citation(format: $format, accessed: $accessed) }
  }
}
""",
)
"""A kernel or serving run's citation (digest, prefix or name) in a format, pinned to the commit that answers, with
the reader's access date (`$accessed`: a served registry adds none of its own)."""

# The read commands' documents. Every list is a connection paged by `$first`/`$after` (the command's `--limit` and
# `--cursor`); no field carries a URL, so an answer is the same bytes from any registry serving the same commit.
_PAGE = "totalCount pageInfo { hasNextPage endCursor }"
_RUN = """
  digest name status trust observedAt rank eligible
  primary { metric statistic unit value display }
  operation { name } implementation { name } environment { gpu } workload { label } source { slug }
"""
_SERVING_RUN = """
  digest name status trust eligible observedAt submitter scenario qualityPolicy cohortKey
  model { name } topology { acceleratorModel totalAccelerators }
  measurements { metric statistic unit value display }
"""
_PICK = "run { digest name primary { display } } rank why"


def _list(operation: str, arguments: str, field: str, node: str) -> Document:
    """A document reading one paged list of the snapshot at `$at`: `field` with its arguments, each node's `node`."""
    return Document(
        operation,
        f"""
query {operation}($at: String, {arguments}$first: Int, $after: String) {{
  registry(at: $at) {{
    commit {{ id }}
    {field} {{ {_PAGE} edges {{ node {{ {node} }} }} }}
  }}
}}
""",
    )


RUNS = _list(
    "Runs",
    "$filter: RunFilter, $order: RunOrder! = NEWEST_OBSERVED, ",
    "runs(filter: $filter, order: $order, first: $first, after: $after)",
    _RUN,
)
"""Runs narrowed by a `RunFilter`, in an order (newest observed first by default)."""

RECORDS = _list(
    "Records",
    "$filter: RecordFilter, $order: RecordOrder! = NEWEST, ",
    "records(filter: $filter, order: $order, first: $first, after: $after)",
    """
  since cohort { key title size }
  holder { digest name primary { display } implementation { name } environment { gpu } }
  event { cause at value previousValue improvementPct }
""",
)
"""The runs holding a cohort's record, newest record first by default."""

CHANGES = _list(
    "Changes",
    "$since: String, ",
    "changes(since: $since, first: $first, after: $after)",
    """
  commit { id } position committedAt source { slug } publishedCount
  publishedCounts { kind count }
  retracted { runDigest reason } superseded { runDigest byDigest reason } verified { runDigest runner }
  moved { totalCount }
""",
)
"""What each commit of main published, retracted, superseded and verified, newest first (after `$since`)."""

MODELS = _list(
    "Models",
    "",
    "models(first: $first, after: $after)",
    "digest name title model tokenizer servingRuns { totalCount } servingCohorts { totalCount }",
)
"""Models (ModelRevision manifests), by name."""

SERVING_RUNS = _list(
    "ServingRuns",
    "$filter: ServingRunFilter, ",
    "servingRuns(filter: $filter, first: $first, after: $after)",
    _SERVING_RUN,
)
"""Serving runs narrowed by a `ServingRunFilter`."""

SERVING_COHORTS = _list(
    "ServingCohorts",
    "$filter: ServingCohortFilter, ",
    "servingCohorts(filter: $filter, first: $first, after: $after)",
    """
  key size qualityPolicy topologyKey model { name } workload { name }
  metrics { metric statistic direction }
""",
)
"""Serving cohorts (runs comparable under the serving policy) narrowed by a `ServingCohortFilter`."""

SEARCH = Document(
    "Search",
    f"""
query Search($at: String, $query: String!, $first: Int, $after: String) {{
  registry(at: $at) {{
    commit {{ id }}
    search(query: $query) {{
      issues {{ token message }}
      runs(first: $first, after: $after) {{ {_PAGE} edges {{ node {{ {_RUN} }} }} }}
    }}
  }}
}}
""",
)
"""Runs matching a query in the search grammar, most relevant first, with what the query could not use."""

GPUS = Document(
    "Gpus",
    """
query Gpus($at: String) {
  registry(at: $at) {
    commit { id }
    gpus { slug vendor product architecture architectures runCount cohortCount operationCount }
  }
}
""",
)
"""GPU products with environments in the registry, most kernel runs first (a list, not paged)."""

COMPARE = Document(
    "Compare",
    f"""
query Compare($at: String, $runs: [String!]!) {{
  registry(at: $at) {{
    commit {{ id }}
    compare(runs: $runs) {{
      sameCohort material missing
      entries {{ rank tiedWithPrevious run {{ digest }} }}
      runs {{ {_RUN} }}
      rows {{ field values same material }}
    }}
  }}
}}
""",
)
"""Runs side by side: each field's values, which differ, and which of those make them incomparable."""

_ANSWER = f"""
  cohort {{ key title size }} rankedCount
  leader {{ {_PICK} }} bestVerified {{ {_PICK} }} bestDeployable {{ {_PICK} }}
"""

RESOLVE_KERNEL = Document(
    "ResolveKernel",
    f"""
query ResolveKernel($at: String, $operation: String!, $gpu: String, $dtype: String, $axes: [AxisValueInput!],
                    $shape: [Int!], $first: Int, $after: String) {{
  registry(at: $at) {{
    commit {{ id }}
    resolveKernel(operation: $operation, gpu: $gpu, dtype: $dtype, axes: $axes, shape: $shape) {{
      mode summary policy exactCount openParts
      request {{ operation gpu dtype axes {{ name value }} shape }}
      operations {{ how operation {{ name title }} }}
      problems {{ part message suggestions }}
      exact(first: $first, after: $after) {{ {_PAGE} edges {{ node {{ {_ANSWER} }} }} }}
      nearest(first: $first, after: $after) {{
        {_PAGE}
        edges {{ node {{ distance answer {{ {_ANSWER} }} differences {{ facet explanation }} }} }}
      }}
    }}
  }}
}}
""",
)
"""The kernel resolver: the cohorts measuring exactly a request, else the nearest measured cases, else problems."""

SERVING_RESOLVE = Document(
    "ServingResolve",
    f"""
query ServingResolve($at: String, $key: String!, $constraints: [ServingConstraintInput!],
                     $objective: ServingObjectiveInput) {{
  registry(at: $at) {{
    commit {{ id }}
    servingCohort(key: $key) {{
      key size model {{ name }} workload {{ name }}
      resolve(constraints: $constraints, objective: $objective) {{
        policyVersion mode axes
        objective {{ metric statistic direction }}
        runs {{ rank value onFrontier feasible eligible reasons missingAxes run {{ {_SERVING_RUN} }} }}
        excluded {{ reasons run {{ digest name }} }}
      }}
    }}
  }}
}}
""",
)
"""A serving cohort's runs that meet every constraint, ranked by an objective (else its Pareto frontier)."""

SHOW = Document(
    "Show",
    """
query Show($at: String, $id: String!, $kind: ManifestKind) {
  registry(at: $at) {
    commit { id }
    manifest(digest: $id, kind: $kind) {
      kind digest name path publishedAt text json
      provenance { commit { id } source { slug } }
    }
  }
}
""",
)
"""One manifest as stored (digest, prefix or name; `$kind` when a name is shared), with its publication."""

SHOW_RUN = Document(
    "ShowRun",
    """
query ShowRun($at: String, $id: String!) {
  registry(at: $at) {
    run(id: $id) {
      status trust rank tiedWithPrevious eligible ineligibilityReasons warnings
      primary { display metric statistic }
      operation { name } implementation { name } environment { gpu } workload { label }
      cohort { key size rankedCount }
      leader { digest name primary { display } }
      retraction { reason }
      supersededBy { digest name }
    }
  }
}
""",
)
"""A run's dossier (by digest, pinned to the commit `SHOW` answered at): its standing, cohort and integrity warnings."""
