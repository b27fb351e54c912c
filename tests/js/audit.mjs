// graphql-http's server audit against a served registry (issue 9): prints the counts, exits 1 on any
// warning or error. Usage: node audit.mjs http://127.0.0.1:PORT/graphql
import { serverAudits } from "graphql-http";

const url = process.argv[2];
const counts = { ok: 0, warn: 0, notice: 0, error: 0 };
const problems = [];
for (const audit of serverAudits({ url })) {
  const result = await audit.fn();
  counts[result.status] += 1;
  if (result.status !== "ok") problems.push(`${result.status} ${audit.name}: ${result.reason ?? ""}`);
}
console.log(JSON.stringify({ counts, problems }));
process.exit(counts.warn + counts.error === 0 ? 0 : 1);
