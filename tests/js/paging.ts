// Both normalized caches page every entry of a cohort while a commit lands mid-way, with the API guide's
// recipes (recipes/apollo.ts, recipes/urql.ts). Run by tests/test_clients_js.py, which serves a copy of the
// embedded registry, and adds a run to the cohort through the registry's write path when this script says
// "after page 2" (a JSON line with `pause`) and answers on stdin. Prints one JSON line of findings.
// Usage: node out/paging.js URL COHORT_KEY OTHER_COHORT_KEY OTHER_RUN
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import type { LeaderboardPageQuery } from "./generated/graphql.js";
import * as apollo from "./recipes/apollo.js";
import * as urql from "./recipes/urql.js";

const [url, key, otherKey, otherRun] = process.argv.slice(2) as [string, string, string, string];
const warnings: string[] = [];
const warn = console.warn;
console.warn = (...args: unknown[]) => { warnings.push(args.map(String).join(" ")); warn(...args); };

async function post(body: object): Promise<any> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return response.json();
}

const IDS = `query Ids($run: String!, $other: String!, $key: String!) { commit { id }
  run(id: $run) { id } other: cohort(key: $other) { id } touched: cohort(key: $key) { id } }`;
const PINNED = `query Pinned($at: String!, $run: String!) { registry(at: $at) { run(id: $run) { id } } }`;

async function ids(): Promise<Record<string, string>> {
  const { data } = await post({ query: IDS, variables: { run: otherRun, other: otherKey, key } });
  const pinned = await post({ query: PINNED, variables: { at: data.commit.id, run: otherRun } });
  return { commit: data.commit.id, run: data.run.id, other: data.other.id, touched: data.touched.id,
    pinnedRun: pinned.data.registry.run.id };
}

const commitOf = (cursor: string) => Buffer.from(cursor, "base64url").toString().split(":")[0];

function summary(page: LeaderboardPageQuery) {
  const cohort = page.cohort!;
  const edges = cohort.entries!.edges;
  return {
    id: cohort.id, size: cohort.size, totalCount: cohort.entries!.totalCount, entries: edges.length,
    distinctRuns: new Set(edges.map((e) => e.node.run.id)).size,
    ranksInOrder: edges.every((e, i) => i === 0 || e.node.rank >= edges[i - 1]!.node.rank),
    commits: [...new Set(edges.map((e) => commitOf(e.cursor)))],
    pageCommit: cohort.entries!.pageInfo.commit, hasNextPage: cohort.entries!.pageInfo.hasNextPage,
  };
}

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const before = await ids();
const apolloClient = apollo.makeApolloClient(url);
const urqlClient = urql.makeUrqlClient(url);
let a = await apollo.firstPage(apolloClient, key);
let u = await urql.firstPage(urqlClient, key);
const firstId = a.cohort!.id;
a = await apollo.nextPage(apolloClient, key, a.cohort!.entries!.pageInfo.endCursor!);
u = await urql.nextPage(urqlClient, key, u.cohort!.entries!.pageInfo.endCursor!);
console.log(JSON.stringify({ pause: "after page 2", apollo: a.cohort!.entries!.edges.length, urql: u.cohort!.entries!.edges.length }));
await lines.next(); // the commit has landed and the server serves it
const between = await ids();
while (a.cohort!.entries!.pageInfo.hasNextPage) a = await apollo.nextPage(apolloClient, key, a.cohort!.entries!.pageInfo.endCursor!);
while (u.cohort!.entries!.pageInfo.hasNextPage) u = await urql.nextPage(urqlClient, key, u.cohort!.entries!.pageInfo.endCursor!);
const paged = { apollo: summary(a), urql: summary(u) };
const restarted = { apollo: summary(await apollo.firstPage(apolloClient, key)), urql: summary(await urql.firstPage(urqlClient, key)) };
// The old list is still whole in Apollo's cache, under the cohort's old id.
const oldCohort = (apolloClient.cache.extract() as Record<string, unknown>)[`Cohort:${firstId}`];

// A persisted document as codegen wrote it: registered once (APQ), then named by the draft's documentId.
const [[hash, document]] = Object.entries(JSON.parse(readFileSync(new URL("../generated/persisted-documents.json", import.meta.url), "utf8"))) as [[string, string]];
await post({ query: document, variables: { key }, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
const byDocumentId = await post({ documentId: hash, variables: { key } });

console.log(JSON.stringify({
  before, between, paged, restarted,
  oldCohortKept: oldCohort !== undefined,
  invalidKeyWarnings: warnings.filter((w) => /Invalid key/i.test(w)).length,
  warnings: warnings.slice(0, 5),
  documentId: { hash, size: byDocumentId.data?.cohort?.size ?? null, errors: byDocumentId.errors ?? null },
}));
process.exit(0);
