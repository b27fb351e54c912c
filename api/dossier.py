"""The run dossier: everything a run page shows, as one GraphQL query (the permalink serves its answer)."""

from __future__ import annotations

__all__ = ["DOSSIER_QUERY"]

DOSSIER_QUERY = """
query Dossier($at: String, $id: String!) {
  registry(at: $at) {
    run(id: $id) {
      digest name title status observedAt publishedAt
      primary { metric statistic unit value display interval { low high } }
      measurements { metric statistic unit value display sampleCount }
      sourceNative { source benchmark externalId summary metrics { name value } }
      rank tiedWithPrevious eligible ineligibilityReasons warnings trust
      cohort { key profile size rankedCount metricKey correctnessKey }
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
      retraction { digest reason publishedAt }
      supersededBy { digest name }
      source { slug name license attribution url }
      provenance {
        commit { id committedAt author { name email } committer { name email } subject trailers { key value }
                 signature { signed verified signer reason } }
        license attribution sourceUrl snapshot
      }
      permalink
      citation
      manifest
      bundle
    }
  }
}
"""
