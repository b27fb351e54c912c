"""The run dossiers: everything a run page shows, as one GraphQL query (the permalink serves its answer),
for a kernel run and for a serving run. The run page also asks, with `$copy`, for the citations its copy
buttons copy when the registry has no base URL (under a placeholder origin its script replaces)."""

from __future__ import annotations

__all__ = ["DOSSIER_QUERY", "SERVING_DOSSIER_QUERY"]

DOSSIER_QUERY = """
query Dossier($at: String, $id: String!, $copy: Boolean! = false, $copyBase: String) {
  registry(at: $at) {
    commit { id committedAt }
    run(id: $id) {
      digest name title status observedAt publishedAt
      primary { metric statistic unit value display interval { low high } }
      measurements { metric statistic unit value display sampleCount }
      sourceNative { source benchmark externalId summary metrics { name value } }
      rank tiedWithPrevious eligible ineligibilityReasons warnings trust hasRawEvidence
      cohort { key profile size rankedCount metricKey correctnessKey
               history { cause at value previousValue improvementPct run { digest name } } }
      leader { digest name primary { value display } }
      operation { digest name title family }
      workload { digest name kind label cases correctness }
      implementation { digest name title displayName revision language sourceAvailable
                       project { digest name displayName } }
      protocol { digest name title harness timer primaryStatistic correctnessReference comparabilityFamily }
      environment { digest name title vendor product architecture gpu }
      correctness correctnessNote
      artifacts { role uri digest }
      attestations { digest type body evidenceUrl publishedAt }
      verifications { digest runner honoured }
      retraction { digest reason publishedAt provenance { commit { id shortId signature { verified signer } } } }
      supersededBy { digest name }
      supersession { digest reason publishedAt provenance { commit { id shortId signature { verified signer } } } }
      source { slug name license attribution url }
      provenance {
        commit { id committedAt author { name email } committer { name email } subject trailers { key value }
                 signature { signed verified signer reason } }
        license attribution sourceUrl snapshot
      }
      permalink statusUrl
      citation
      citationBibtex: citation(format: BIBTEX)
      citationCslJson: citation(format: CSL_JSON)
      copyText: citation(baseUrl: $copyBase) @include(if: $copy)
      copyBibtex: citation(format: BIBTEX, baseUrl: $copyBase) @include(if: $copy)
      copyCslJson: citation(format: CSL_JSON, baseUrl: $copyBase) @include(if: $copy)
      manifest
      bundle
    }
  }
}
"""

SERVING_DOSSIER_QUERY = """
query ServingDossier($at: String, $id: String!, $copy: Boolean! = false, $copyBase: String) {
  registry(at: $at) {
    commit { id committedAt }
    servingRun(id: $id) {
      digest name title status observedAt publishedAt scenario qualityPolicy placement submitter
      measurements { metric statistic unit value display direction comparable }
      sourceNative { source benchmark scenario division category externalId metrics { name value } }
      cohortKey protocolKey metricSetKey eligible ineligibilityReasons warnings trust caveats
      cohort { key policyVersion size tokenizer protocolKey topologyKey qualityPolicy metricSetKey }
      model { digest name title model tokenizer }
      configuration { digest name summary dtype quantization stack { digest name project version apiProtocol } }
      workload { digest name title streaming loadGeneration dataset slo { metric statistic operator value unit } }
      topology { acceleratorVendor acceleratorModel acceleratorsPerNode nodeCount interconnect totalAccelerators key }
      harness { name version }
      source { slug name license attribution url }
      provenance {
        commit { id committedAt author { name email } committer { name email } subject trailers { key value }
                 signature { signed verified signer reason } }
        license attribution sourceUrl snapshot
      }
      permalink
      citation
      copyText: citation(baseUrl: $copyBase) @include(if: $copy)
      manifest
    }
  }
}
"""
