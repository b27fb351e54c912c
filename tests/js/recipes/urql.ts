// Paging a leaderboard with urql and Graphcache: objects with an `id` are normalized by it, value types
// (which have none) are embedded with `keys: () => null`, and relayPagination merges the pages of `entries`.
import { Client, fetchExchange } from "@urql/core";
import { cacheExchange } from "@urql/exchange-graphcache";
import { relayPagination } from "@urql/exchange-graphcache/extras";
import type { LeaderboardPageQuery } from "../generated/graphql.js";
import { LeaderboardPage } from "./leaderboard.js";

const embedded = () => null;

export function makeUrqlClient(url: string): Client {
  return new Client({
    url,
    preferGetMethod: false,
    exchanges: [
      cacheExchange({
        keys: {
          CohortEntryConnection: embedded,
          CohortEntryEdge: embedded,
          CohortEntry: embedded,
          PageInfo: embedded,
          Primary: embedded,
        },
        resolvers: { Cohort: { entries: relayPagination() } },
      }),
      fetchExchange,
    ],
  });
}

/** The first page, fetched anew: a leaderboard (re)starts here, at the head of main. */
export async function firstPage(client: Client, key: string): Promise<LeaderboardPageQuery> {
  const result = await client.query(LeaderboardPage, { key }, { requestPolicy: "network-only" }).toPromise();
  if (!result.data) throw result.error ?? new Error("no data");
  return result.data;
}

/** The next page after `after`: Graphcache answers the pages cached so far, merged (from one commit: the server
 * answers a cursor from the commit it was cut from). */
export async function nextPage(client: Client, key: string, after: string): Promise<LeaderboardPageQuery> {
  const result = await client.query(LeaderboardPage, { key, after }).toPromise();
  if (!result.data) throw result.error ?? new Error("no data");
  return result.data;
}
