"""The named GraphQL document behind each page: a page shows what its document answers, nothing else.
The read side's documents that other edges share (the feed, a run's standing, the dataset, the resolver's
fields) live in `api/service/read_documents.py` and are named here too.

Each is an ordinary query a frontend developer can copy (every page links to its own, opened at
`/graphql`); `$at` pins it to a commit (null: the served head of main). The run page's document is
the run dossier (`api/service/dossier.py`), the one its permalink serves as JSON.
"""

from __future__ import annotations

from kernelindex.service.dossier import DOSSIER_QUERY, SERVING_DOSSIER_QUERY
from kernelindex.service.read_documents import CATALOG_EXPORT, CHANGES, RESOLUTION_FIELDS, RUN_STANDING

__all__ = [
    "CATALOG_EXPORT",
    "CHANGES",
    "COHORT_CARD",
    "COMMIT",
    "COMPARE",
    "GPU",
    "GPUS",
    "HOME",
    "IMPLEMENTATION",
    "IMPLEMENTATION_BADGE",
    "LEADERBOARD",
    "MODEL",
    "MODELS",
    "OPERATION",
    "OPERATIONS",
    "OPERATION_CARD",
    "PROJECT",
    "PROJECTS",
    "RECORDS",
    "RUN",
    "RUN_BADGE",
    "RUN_BY_ID",
    "RUN_CARD",
    "RUN_STANDING",
    "SEARCH",
    "SERVING",
    "SERVING_COHORT",
    "SERVING_RUN",
    "SOURCE",
    "SOURCES",
    "VERIFY",
]

RUN = DOSSIER_QUERY
SERVING_RUN = SERVING_DOSSIER_QUERY

_COMMIT = "commit { id shortId committedAt }"
_RUN_ROW = (
    "digest name trust observedAt primary { value display interval { low high } } implementation { digest displayName }"
)

HOME = f"""
query Home($at: String) {{
  registry(at: $at) {{
    {_COMMIT}
    counts {{ kind count }}
    newest: runs(first: 1) {{ totalCount edges {{ node {{ observedAt }} }} }}
    records(first: 10) {{
      totalCount
      edges {{ node {{
        since
        cohort {{ key size operation {{ name title }} workload {{ label }} environment {{ gpu }} }}
        holder {{ {_RUN_ROW} }}
      }} }}
    }}
    cohorts(first: 10) {{
      totalCount
      edges {{ node {{ key size operation {{ name title }} workload {{ label }} environment {{ gpu }} }} }}
    }}
  }}
}}
"""

LEADERBOARD = f"""
query Leaderboard($at: String, $key: String!, $first: Int!, $after: String, $minTrust: Trust,
                  $copy: Boolean! = false, $copyBase: String) {{
  registry(at: $at) {{
    {_COMMIT}
    cohort(key: $key) {{
      key profile size rankedCount metricKey permalink
      citation
      citationBibtex: citation(format: BIBTEX)
      citationCslJson: citation(format: CSL_JSON)
      copyText: citation(baseUrl: $copyBase) @include(if: $copy)
      copyBibtex: citation(format: BIBTEX, baseUrl: $copyBase) @include(if: $copy)
      copyCslJson: citation(format: CSL_JSON, baseUrl: $copyBase) @include(if: $copy)
      operation {{ digest name title }}
      workload {{ digest name label }}
      protocol {{ digest harness primaryStatistic }}
      environment {{ digest gpu }}
      holder {{ at run {{ digest name }} }}
      entries(first: $first, after: $after, minTrust: $minTrust) {{
        totalCount
        pageInfo {{ hasNextPage endCursor }}
        edges {{ node {{ rank tiedWithPrevious run {{ {_RUN_ROW} }} }} }}
      }}
    }}
  }}
}}
"""

RECORDS = f"""
query Records($at: String, $first: Int!, $after: String) {{
  registry(at: $at) {{
    {_COMMIT}
    records(first: $first, after: $after) {{
      totalCount
      pageInfo {{ hasNextPage endCursor }}
      edges {{ node {{
        since
        cohort {{
          key size
          operation {{ name title }} workload {{ label }} environment {{ gpu }}
          history {{ cause at value run {{ digest name }} }}
        }}
        holder {{ {_RUN_ROW} }}
      }} }}
    }}
  }}
}}
"""

COMPARE = f"""
query Compare($at: String, $runs: [String!]!) {{
  registry(at: $at) {{
    {_COMMIT}
    compare(runs: $runs) {{
      sameCohort material missing
      runs {{ {_RUN_ROW} eligible cohort {{ key }} }}
      entries {{ rank tiedWithPrevious run {{ digest }} }}
      rows {{ field values same material }}
    }}
  }}
}}
"""

OPERATION = f"""
query Operation($at: String, $id: String!) {{
  registry(at: $at) {{
    {_COMMIT}
    operation(id: $id) {{
      digest name title family runCount
      workloads(first: 100) {{ totalCount }}
      implementations(first: 100) {{ totalCount edges {{ node {{ digest name displayName }} }} }}
      cohorts(first: 100) {{
        totalCount
        edges {{ node {{
          key size rankedCount
          workload {{ name label axes {{ name value number }} }} environment {{ gpu product }} protocol {{ harness }}
          leader {{ {_RUN_ROW} }}
        }} }}
      }}
      related(first: 20) {{ totalCount edges {{ node {{ digest name title runCount }} }} }}
    }}
  }}
}}
"""

OPERATIONS = f"""
query Operations($at: String, $family: String, $search: String, $first: Int!, $after: String) {{
  registry(at: $at) {{
    {_COMMIT}
    operationFamilies {{ name operationCount runCount }}
    operations(family: $family, search: $search, first: $first, after: $after) {{
      totalCount
      pageInfo {{ hasNextPage endCursor }}
      edges {{ node {{ digest name title family runCount cohorts(first: 0) {{ totalCount }} }} }}
    }}
  }}
}}
"""

GPUS = f"""
query Gpus($at: String) {{
  registry(at: $at) {{
    {_COMMIT}
    gpus {{ slug vendor product architectures runCount cohortCount operationCount }}
  }}
}}
"""

GPU = f"""
query Gpu($at: String, $id: String!, $first: Int!, $after: String) {{
  registry(at: $at) {{
    {_COMMIT}
    gpu(id: $id) {{
      slug vendor product architectures runCount cohortCount operationCount
      environments {{ digest name }}
      operations(first: $first, after: $after) {{
        totalCount
        pageInfo {{ hasNextPage endCursor }}
        edges {{ node {{
          cohortCount
          operation {{ digest name title family }}
          cohorts(first: 5) {{ edges {{ node {{
            key size workload {{ label }} protocol {{ harness }} leader {{ {_RUN_ROW} }}
          }} }} }}
        }} }}
      }}
    }}
  }}
}}
"""

MODELS = f"""
query Models($at: String) {{
  registry(at: $at) {{
    {_COMMIT}
    models(first: 100) {{
      totalCount
      edges {{ node {{
        digest name title model tokenizer
        servingRuns(first: 0) {{ totalCount }}
        servingCohorts(first: 0) {{ totalCount }}
      }} }}
    }}
  }}
}}
"""

MODEL = f"""
query Model($at: String, $id: String!, $first: Int!, $after: String) {{
  registry(at: $at) {{
    {_COMMIT}
    model(id: $id) {{
      digest name title model tokenizer
      servingRuns(first: 0) {{ totalCount }}
      servingCohorts(first: $first, after: $after) {{
        totalCount
        pageInfo {{ hasNextPage endCursor }}
        edges {{ node {{
          key size topologyKey qualityPolicy
          workload {{ name title }}
          metrics {{ metric statistic }}
          resolve {{ mode runs {{ onFrontier rank run {{ digest name configuration {{ summary }} }} }} }}
        }} }}
      }}
    }}
  }}
}}
"""

PROJECTS = f"""
query Projects($at: String, $first: Int!, $after: String) {{
  registry(at: $at) {{
    {_COMMIT}
    projects(order: STANDING, first: $first, after: $after) {{
      totalCount
      pageInfo {{ hasNextPage endCursor }}
      edges {{ node {{
        digest name displayName
        standing {{ cohortsLed recordsHeld cohortsEntered runCount implementationCount }}
      }} }}
    }}
  }}
}}
"""

SOURCES = f"""
query Sources($at: String) {{
  registry(at: $at) {{
    {_COMMIT}
    sources {{
      runCount
      source {{
        slug name license attribution url manifestCount servingRunCount commitCount
        latestCommit {{ id shortId committedAt subject }}
      }}
    }}
  }}
}}
"""

SERVING = f"""
query Serving(
  $at: String, $model: String, $workload: String,
  $constraints: [ServingConstraintInput!], $objective: ServingObjectiveInput,
  $first: Int!, $after: String
) {{
  registry(at: $at) {{
    {_COMMIT}
    servingMetrics {{ metric unit direction }}
    models(first: 100) {{ edges {{ node {{ digest name title }} }} }}
    servingWorkloads(first: 100) {{ edges {{ node {{ digest name title }} }} }}
    servingCohorts(filter: {{model: $model, workload: $workload}}, first: $first, after: $after) {{
      totalCount
      pageInfo {{ hasNextPage endCursor }}
      edges {{ node {{
        key size topologyKey qualityPolicy
        model {{ name title }} workload {{ name title }}
        resolve(constraints: $constraints, objective: $objective) {{
          mode axes
          constraints {{ text }}
          objective {{ metric statistic direction }}
          runs {{
            rank value onFrontier
            run {{ digest name submitter configuration {{ summary }} }}
          }}
          excluded {{ reasons run {{ digest }} }}
        }}
      }} }}
    }}
  }}
}}
"""

RUN_CARD = """
query RunCard($at: String, $id: String!) {
  registry(at: $at) {
    commit { id shortId committedAt }
    run(id: $id) {
      digest name rank trust
      primary { display statistic metric }
      cohort { rankedCount }
      implementation { displayName }
      operation { name title }
      environment { gpu }
    }
  }
}
"""

COHORT_CARD = """
query CohortCard($at: String, $key: String!) {
  registry(at: $at) {
    commit { id shortId committedAt }
    cohort(key: $key) {
      key size rankedCount
      operation { name title }
      workload { label }
      environment { gpu }
      leader { primary { display } implementation { displayName } }
    }
  }
}
"""

OPERATION_CARD = """
query OperationCard($at: String, $id: String!) {
  registry(at: $at) {
    commit { id shortId committedAt }
    operation(id: $id) {
      digest name title family runCount
      cohorts(first: 1) {
        totalCount
        edges { node { environment { gpu } leader { primary { display } implementation { displayName } } } }
      }
    }
  }
}
"""

IMPLEMENTATION = f"""
query Implementation($at: String, $id: String!) {{
  registry(at: $at) {{
    {_COMMIT}
    implementation(id: $id) {{
      digest name title displayName revision language sourceAvailable
      operation {{ digest name title }}
      project {{ digest name displayName }}
      license {{ declared stated concluded known permissive evidencePath }}
      installable
      installVariants {{
        name kind package version repository commit command pinned requirements {{ name constraint }}
      }}
      sourceCode {{ available repository commit version contentDigest fileName sizeBytes }}
      deployability {{ deployable reasons policy explanation }}
      runs(first: 100) {{
        totalCount
        edges {{ node {{ {_RUN_ROW} rank eligible cohort {{ key size }} workload {{ label }} environment {{ gpu }} }} }}
      }}
    }}
  }}
}}
"""

PROJECT = f"""
query Project($at: String, $id: String!) {{
  registry(at: $at) {{
    {_COMMIT}
    project(id: $id) {{
      digest name title displayName
      implementations(first: 100) {{
        totalCount
        edges {{ node {{
          digest name displayName revision operation {{ name title }} runs(first: 1) {{ totalCount }}
        }} }}
      }}
    }}
  }}
}}
"""

SOURCE = f"""
query Source($at: String, $slug: String!) {{
  registry(at: $at) {{
    {_COMMIT}
    runs(filter: {{source: $slug}}, first: 50) {{
      totalCount
      edges {{ node {{
        {_RUN_ROW} rank
        operation {{ name title }} workload {{ label }} environment {{ gpu }}
        source {{ slug name license attribution url }}
        provenance {{ commit {{ id committedAt subject }} }}
      }} }}
    }}
  }}
}}
"""

COMMIT = """
query Commit($at: String!, $first: Int!, $after: String) {
  registry(at: $at) {
    commit {
      id shortId committedAt authoredAt subject message
      author { name email } committer { name email }
      trailers { key value }
      signature { signed verified signer reason }
    }
    counts { kind count }
    publishedCounts { kind count }
    published(first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { kind digest name title } }
    }
  }
}
"""

RUN_BY_ID = """
query RunById($id: String!) {
  registry {
    run(id: $id) { digest provenance { commit { id } } }
  }
}
"""

RUN_BADGE = """
query RunBadge($at: String, $id: String!) {
  registry(at: $at) {
    commit { id }
    run(id: $id) { digest rank eligible primary { display } cohort { rankedCount } }
  }
}
"""

IMPLEMENTATION_BADGE = """
query ImplementationBadge($at: String, $id: String!) {
  registry(at: $at) {
    commit { id }
    implementation(id: $id) {
      displayName
      runs(first: 100) { totalCount edges { node { rank primary { value display } cohort { rankedCount } } } }
    }
  }
}
"""

SERVING_COHORT = """
query ServingCohort($at: String, $key: String!) {
  registry(at: $at) {
    commit { id shortId committedAt }
    servingCohort(key: $key) {
      key policyVersion size tokenizer protocolKey topologyKey qualityPolicy metricSetKey
      model { digest name title model }
      workload { digest name title streaming loadGeneration dataset slo { metric statistic operator value unit } }
      metrics { metric statistic direction }
      resolve {
        mode axes
        runs {
          rank value onFrontier missingAxes
          run {
            digest name submitter scenario
            configuration { summary }
            topology { acceleratorModel totalAccelerators }
            measurements { metric statistic value display comparable }
          }
        }
        excluded { reasons run { digest name submitter } }
      }
    }
  }
}
"""

SEARCH = f"""
query Search($at: String, $q: String!, $first: Int, $after: String, $cases: Int!) {{
  registry(at: $at) {{
    {_COMMIT}
    search(query: $q) {{
      text
      facets {{ token field display }}
      issues {{ token message }}
      resolution {{ {RESOLUTION_FIELDS} }}
      runs(first: $first, after: $after) {{
        totalCount
        pageInfo {{ hasNextPage endCursor }}
        edges {{ node {{
          {_RUN_ROW} rank eligible
          operation {{ name title }} workload {{ label }} environment {{ gpu }} cohort {{ key }}
        }} }}
      }}
    }}
  }}
}}
"""

VERIFY = f"""
query Verify($citation: String!, $given: Boolean!) {{
  registry {{
    {_COMMIT}
    verifyCitation(citation: $citation) @include(if: $given) {{
      verdict digest citedCommit kind state
      steps {{ name passed detail }}
      commit {{ id shortId committedAt }}
      publishedIn {{ id shortId committedAt }}
      manifest {{ digest permalink }}
      facts {{ kind reason commit {{ id shortId committedAt }} }}
    }}
  }}
}}
"""
