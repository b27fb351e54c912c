"""The read side's named GraphQL documents, shared by every edge that shows them: what changed commit by
commit (the `/feed` page, the JSON feed, the command line's `changes`), the kernel resolver (the search page,
MCP's `resolve_kernel`, the command line's `resolve kernel`), a run's standing (its status page), and the
dataset (the exports page). Each is an ordinary query a frontend can copy; `$at` pins it to a commit (null:
the served head of main)."""

from __future__ import annotations

__all__ = [
    "CATALOG_EXPORT",
    "CHANGES",
    "CHANGE_FIELDS",
    "RESOLUTION_FIELDS",
    "RESOLVE_KERNEL",
    "RUN_STANDING",
]

_RUN = "digest name"

CHANGE_FIELDS = f"""
position committedAt
commit {{ id shortId subject author {{ name }} signature {{ verified signer }} }}
source {{ slug name }}
publishedCount
publishedCounts {{ kind count }}
published(first: $published) {{ totalCount edges {{ node {{ kind digest name title }} }} }}
retracted {{ runDigest reason run {{ {_RUN} }} retraction {{ digest }} }}
superseded {{ runDigest reason run {{ {_RUN} }} byDigest by {{ {_RUN} }} supersession {{ digest }} }}
verified {{ runDigest runner run {{ {_RUN} }} rerun {{ {_RUN} }} verification {{ digest }} }}
ignored {{ kind digest name }}
moved(first: $moved) {{
  totalCount
  edges {{ node {{
    cause at value previousValue
    cohort {{ key operation {{ name title }} environment {{ gpu }} }}
    run {{ {_RUN} }} previousRun {{ {_RUN} }}
  }} }}
}}
"""
"""What each commit's entry shows: `$published` and `$moved` say how many of its manifests and record events
(the rest are a page away: `published(after:)`, `moved(after:)`)."""

CHANGES = f"""
query Changes($at: String, $since: String, $first: Int!, $after: String, $published: Int!, $moved: Int!) {{
  registry(at: $at) {{
    commit {{ id shortId committedAt }}
    changes(since: $since, first: $first, after: $after) {{
      totalCount
      pageInfo {{ hasNextPage endCursor }}
      edges {{ node {{ {CHANGE_FIELDS} }} }}
    }}
  }}
}}
"""

_PICK = "run { digest name primary { display } implementation { digest displayName } } rank why"
_ANSWER = f"""
rankedCount
cohort {{ key size workload {{ name label }} environment {{ gpu }} protocol {{ harness }} }}
leader {{ {_PICK} }} bestVerified {{ {_PICK} }} bestDeployable {{ {_PICK} }}
"""

RESOLUTION_FIELDS = f"""
mode summary policy openParts
request {{ operation gpu dtype axes {{ name value }} shape }}
operations {{ how operation {{ digest name title family }} }}
problems {{ part message suggestions }}
exactCount
exact(first: $cases) {{ totalCount edges {{ node {{ {_ANSWER} }} }} }}
nearest(first: $cases) {{
  totalCount
  edges {{ node {{
    distance
    differences {{ facet axis dimension requested measured delta ratio distance explanation }}
    same {{ facet axis value }}
    answer {{ {_ANSWER} }}
  }} }}
}}
bracket {{ facet axis dimension requested below above }}
"""
"""What a resolver's answer shows: `$cases` says how many exact or nearest cases."""

RESOLVE_KERNEL = f"""
query ResolveKernel($at: String, $operation: String!, $gpu: String, $dtype: String, $axes: [AxisValueInput!],
                    $shape: [Int!], $cases: Int!) {{
  registry(at: $at) {{
    commit {{ id shortId committedAt }}
    resolveKernel(operation: $operation, gpu: $gpu, dtype: $dtype, axes: $axes, shape: $shape) {{
      {RESOLUTION_FIELDS}
    }}
  }}
}}
"""

_FACT = """
kind reason runner position committedAt signedBy
manifest { digest permalink }
successor { digest name }
commit { id shortId subject signature { verified signer } }
"""

RUN_STANDING = f"""
query RunStanding($run: String!, $readAt: String) {{
  registry {{
    commit {{ id shortId committedAt }}
    runStanding(run: $run, readAt: $readAt) {{
      runDigest state eligible ineligibilityReasons trust changed
      readAt {{ id shortId committedAt }}
      run {{ digest name permalink primary {{ display }} implementation {{ displayName }} operation {{ name title }}
             cohort {{ key }} }}
      retraction {{ {_FACT} }}
      supersession {{ {_FACT} }}
      verifications {{ {_FACT} }}
      later {{ kind position }}
      ignored {{ kind digest }}
    }}
  }}
}}
"""

CATALOG_EXPORT = """
query CatalogExport($at: String, $copy: Boolean! = false, $copyBase: String) {
  registry(at: $at) {
    commit { id shortId committedAt }
    catalogExport {
      name format url manifestCount sha256 sizeBytes sources
      tables { table rows }
      citation
      citationBibtex: citation(format: BIBTEX)
      citationCslJson: citation(format: CSL_JSON)
      copyText: citation(baseUrl: $copyBase) @include(if: $copy)
      copyBibtex: citation(format: BIBTEX, baseUrl: $copyBase) @include(if: $copy)
      copyCslJson: citation(format: CSL_JSON, baseUrl: $copyBase) @include(if: $copy)
    }
  }
}
"""
