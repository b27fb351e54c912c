// The document both recipes page with: a cohort's leaderboard, 100 entries a page.
import { graphql } from "../generated/index.js";

export const LeaderboardPage = graphql(`
  query LeaderboardPage($key: String!, $after: String) {
    cohort(key: $key) {
      id
      key
      title
      size
      entries(first: 100, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor commit }
        edges { cursor node { rank tiedWithPrevious run { id name trust observedAt primary { value unit display } } } }
      }
    }
  }
`);
