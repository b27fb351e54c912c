// Apollo Client 4 with its default InMemoryCache, persisted queries and batching against a served
// registry. Prints one JSON line of findings; exits 1 if any expectation fails.
// Usage: node apollo.mjs http://127.0.0.1:PORT/graphql COHORT_KEY PINNED_COMMIT
import { createHash } from "node:crypto";
import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { BatchHttpLink } from "@apollo/client/link/batch-http";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";

const [url, cohort, pinned] = process.argv.slice(2);
const failures = [];
const expect = (what, ok) => { if (!ok) failures.push(what); };

// 1. A head cohort, the same cohort pinned, then the head query read back from the cache.
const cache = new InMemoryCache();
const client = new ApolloClient({ link: new HttpLink({ uri: url, fetch }), cache });
const HEAD = gql`query Head($key: String!) { cohort(key: $key) { id key size } }`;
const PINNED = gql`query Pinned($at: String!, $key: String!) { registry(at: $at) { commit { id } cohort(key: $key) { id key size } } }`;
const head = await client.query({ query: HEAD, variables: { key: cohort } });
const old = await client.query({ query: PINNED, variables: { at: pinned, key: cohort } });
const back = client.readQuery({ query: HEAD, variables: { key: cohort } });
const sizes = { head: head.data.cohort.size, pinned: old.data.registry.cohort.size, readBack: back?.cohort?.size };
expect("head and pinned cohorts differ in size", sizes.head !== sizes.pinned);
expect("the head query reads back its own size from the cache", sizes.readBack === sizes.head);
const normalized = Object.keys(cache.extract()).filter((k) => k.startsWith("Cohort:")).length;
expect("both cohorts are normalized apart", normalized === 2);

// 2. Automatic persisted queries: a miss, the retry with the document, then a hash-only hit over GET.
const seen = [];
const recording = (input, init) => { seen.push({ method: init?.method ?? "GET", body: init?.body ? JSON.parse(init.body) : null }); return fetch(input, init); };
const sha256 = (text) => createHash("sha256").update(text).digest("hex");
const apq = (useGET) => new ApolloClient({
  link: new PersistedQueryLink({ sha256, useGETForHashedQueries: useGET }).concat(new HttpLink({ uri: url, fetch: recording })),
  cache: new InMemoryCache(),
});
const RECORDS = gql`query ApqRecords { records(first: 2) { totalCount } }`;
const first = await apq(false).query({ query: RECORDS });
const second = await apq(true).query({ query: RECORDS });
expect("APQ answers", first.data.records.totalCount > 0 && second.data.records.totalCount === first.data.records.totalCount);
expect("APQ: hash-only POST, then the retry with the document", seen.length >= 2 && seen[0].body && !seen[0].body.query && seen[1].body.query);
expect("APQ: the second client's hash-only GET hit", seen[seen.length - 1].method === "GET" && seen.length === 3);

// 3. BatchHttpLink: two operations in one array body.
let batches = 0;
const batching = new ApolloClient({
  link: new BatchHttpLink({ uri: url, fetch: (i, init) => { batches += 1; return fetch(i, init); }, batchMax: 10, batchInterval: 20 }),
  cache: new InMemoryCache(),
});
const [a, b] = await Promise.all([
  batching.query({ query: gql`query A { commit { id } }` }),
  batching.query({ query: HEAD, variables: { key: cohort } }),
]);
expect("a batch of two in one request", batches === 1 && a.data.commit.id.length === 40 && b.data.cohort.size === sizes.head);

console.log(JSON.stringify({ sizes, normalized, apqRequests: seen.map((s) => s.method + (s.body?.query ? "+document" : "")), batches, failures }));
process.exit(failures.length === 0 ? 0 : 1);
