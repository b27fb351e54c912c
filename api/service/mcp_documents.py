"""The GraphQL documents behind the MCP tools: each tool is one named query against the served schema,
pinned by `registry(at: $at)`, so a tool answers exactly what the API answers for that commit."""

from __future__ import annotations

from kernelindex.service.dossier import DOSSIER_QUERY, SERVING_DOSSIER_QUERY

__all__ = [
    "COHORTS_PAGE",
    "COMMIT",
    "COMPARE",
    "DOSSIER_QUERY",
    "IMPLEMENTATION",
    "MANIFEST",
    "OPERATION",
    "RECORDS",
    "RESOLVE",
    "RUNS",
    "SEARCH",
    "SERVING_COHORTS_PAGE",
    "SERVING_DOSSIER_QUERY",
    "SERVING_RESOLVE",
]

_RUN = "digest name status observedAt rank trust eligible primary { display value unit } permalink"

SEARCH = f"""
query Search($at: String, $q: String!, $first: Int!) {{
  registry(at: $at) {{
    commit {{ id committedAt }}
    operations(search: $q, first: $first) {{ totalCount edges {{ node {{
      digest name title family runCount
      cohorts(first: 3) {{ totalCount edges {{ node {{
        key size workload {{ label }} environment {{ gpu }} leader {{ {_RUN} implementation {{ displayName }} }}
      }} }} }}
    }} }} }}
  }}
}}
"""

_PICK = f"rank why run {{ {_RUN} implementation {{ digest name displayName }} }}"

RESOLVE = f"""
query Resolve($at: String, $operation: String!, $gpu: String, $dtype: String, $axes: [AxisValueInput!],
              $shape: [Int!], $cases: Int!, $minTrust: Trust) {{
  registry(at: $at) {{
    commit {{ id committedAt }}
    resolveKernel(operation: $operation, gpu: $gpu, dtype: $dtype, axes: $axes, shape: $shape) {{
      mode summary policy openParts
      operations {{ how operation {{ digest name title family }} }}
      problems {{ part message suggestions }}
      exact(first: $cases) {{ totalCount edges {{ node {{ ...Answer }} }} }}
      nearest(first: $cases) {{ totalCount edges {{ node {{
        distance differences {{ facet axis dimension requested measured ratio distance explanation }}
        answer {{ ...Answer }}
      }} }} }}
      bracket {{ facet axis dimension requested below above }}
    }}
  }}
}}

fragment Answer on KernelCohortAnswer {{
  rankedCount
  cohort {{
    key profile size metricKey workload {{ digest name label }} environment {{ gpu }} protocol {{ harness }}
    best: entries(first: 1, minTrust: $minTrust) {{ edges {{ node {{ rank tiedWithPrevious run {{
      {_RUN} implementation {{ digest name displayName sourceAvailable }}
    }} }} }} }}
  }}
  leader {{ {_PICK} }} bestVerified {{ {_PICK} }} bestDeployable {{ {_PICK} }}
}}
"""

OPERATION = f"""
query Operation($at: String, $id: String!) {{
  registry(at: $at) {{
    commit {{ id committedAt }}
    operation(id: $id) {{
      digest name title family runCount manifest {{ permalink json }}
      workloads(first: 10) {{ totalCount edges {{ node {{ digest name label kind cases }} }} }}
      implementations(first: 10) {{ totalCount edges {{ node {{ digest name displayName language }} }} }}
      cohorts(first: 10) {{ totalCount edges {{ node {{
        key size workload {{ label }} environment {{ gpu }}
        holder {{ at value run {{ {_RUN} }} }}
      }} }} }}
    }}
  }}
}}
"""

IMPLEMENTATION = f"""
query Implementation($at: String, $id: String!) {{
  registry(at: $at) {{
    commit {{ id committedAt }}
    implementation(id: $id) {{
      digest name title displayName revision language sourceAvailable
      operation {{ digest name }} project {{ digest name displayName }}
      manifest {{ permalink json publishedAt }}
      runs(first: 10) {{ totalCount edges {{ node {{ {_RUN} cohort {{ key size }} }} }} }}
    }}
  }}
}}
"""

COMPARE = """
query Compare($at: String, $runs: [String!]!) {
  registry(at: $at) {
    commit { id committedAt }
    compare(runs: $runs) {
      sameCohort material missing
      runs { digest name permalink primary { display } cohort { key } }
      entries { rank tiedWithPrevious run { name } }
      rows { field values same material }
    }
  }
}
"""

RECORDS = f"""
query Records($at: String, $first: Int!, $after: String) {{
  registry(at: $at) {{
    commit {{ id committedAt }}
    records(first: $first, after: $after) {{
      totalCount pageInfo {{ hasNextPage endCursor }}
      edges {{ node {{
        since
        cohort {{ key size operation {{ name }} workload {{ label }} environment {{ gpu }}
                 history {{ cause at value previousValue improvementPct run {{ name }} previousRun {{ name }} }} }}
        holder {{ {_RUN} implementation {{ displayName }} }}
      }} }}
    }}
  }}
}}
"""

RUNS = f"""
query Runs($at: String, $filter: RunFilter, $first: Int!, $after: String) {{
  registry(at: $at) {{
    commit {{ id committedAt }}
    runs(filter: $filter, first: $first, after: $after) {{
      totalCount pageInfo {{ hasNextPage endCursor }}
      edges {{ node {{
        {_RUN} publishedAt source {{ slug }}
        operation {{ name }} environment {{ gpu }} implementation {{ displayName }} cohort {{ key }}
      }} }}
    }}
  }}
}}
"""

COHORTS_PAGE = """
query CohortsPage($at: String, $after: String) {
  registry(at: $at) {
    commit { id committedAt }
    cohorts(first: 100, after: $after, order: KEY) {
      pageInfo { hasNextPage endCursor }
      edges { node { size environment { vendor product architecture } operation { family } } }
    }
  }
}
"""

MANIFEST = """
query Manifest($at: String, $digest: String!) {
  registry(at: $at) {
    commit { id committedAt }
    manifest(digest: $digest) { kind digest name path permalink text }
  }
}
"""

COMMIT = """
query Commit($at: String) { registry(at: $at) { commit { id committedAt } } }
"""

_SERVING_RUN = (
    "digest name status observedAt permalink submitter scenario "
    "configuration { name summary dtype } topology { acceleratorModel totalAccelerators } "
    "measurements { metric statistic unit value display }"
)

SERVING_RESOLVE = f"""
query ServingResolve($at: String, $filter: ServingCohortFilter, $after: String,
                     $constraints: [ServingConstraintInput!], $objective: ServingObjectiveInput) {{
  registry(at: $at) {{
    commit {{ id committedAt }}
    servingCohorts(filter: $filter, first: 10, after: $after) {{
      totalCount pageInfo {{ hasNextPage endCursor }}
      edges {{ node {{
        key size tokenizer topologyKey qualityPolicy metricSetKey protocolKey
        model {{ digest name model }} workload {{ digest name title loadGeneration }}
        resolve(constraints: $constraints, objective: $objective) {{
          mode axes constraints {{ text }} objective {{ metric statistic direction }}
          runs {{ rank value onFrontier missingAxes run {{ {_SERVING_RUN} }} }}
          excluded {{ reasons run {{ digest name permalink }} }}
        }}
      }} }}
    }}
  }}
}}
"""

SERVING_COHORTS_PAGE = """
query ServingCohortsPage($at: String, $after: String) {
  registry(at: $at) {
    commit { id committedAt }
    servingCohorts(first: 100, after: $after) {
      pageInfo { hasNextPage endCursor }
      edges { node { size model { digest name title model tokenizer } } }
    }
  }
}
"""
