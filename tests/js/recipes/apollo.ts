// Paging a leaderboard with Apollo Client 4: InMemoryCache keeps one Cohort per id, relayStylePagination
// merges the pages of its `entries` (keyed by the arguments that change the list, never by the cursor).
import { ApolloClient, HttpLink, InMemoryCache } from "@apollo/client";
import { relayStylePagination } from "@apollo/client/utilities";
import type { LeaderboardPageQuery } from "../generated/graphql.js";
import { LeaderboardPage } from "./leaderboard.js";

export function makeApolloClient(uri: string): ApolloClient {
  return new ApolloClient({
    link: new HttpLink({ uri }),
    cache: new InMemoryCache({
      typePolicies: {
        Cohort: { fields: { entries: relayStylePagination(["minTrust", "order"]) } },
      },
    }),
  });
}

/** The first page, fetched anew: a leaderboard (re)starts here, at the head of main. */
export async function firstPage(client: ApolloClient, key: string): Promise<LeaderboardPageQuery> {
  const { data } = await client.query({ query: LeaderboardPage, variables: { key }, fetchPolicy: "network-only" });
  if (!data) throw new Error("no data");
  return data;
}

/** The next page after `after`, merged into the cached list; answers the whole list so far. The server answers
 * it from the commit of the first page, so the merged list never mixes commits, even if main moved. */
export async function nextPage(client: ApolloClient, key: string, after: string): Promise<LeaderboardPageQuery> {
  await client.query({ query: LeaderboardPage, variables: { key, after }, fetchPolicy: "network-only" });
  const merged = client.readQuery({ query: LeaderboardPage, variables: { key } });
  if (!merged) throw new Error("the list is not in the cache");
  return merged;
}
