// GraphQL-over-HTTP conformance audit of a running server (graphql-http's auditServer).
// Usage: node audit.mjs <url>. Prints one JSON object {results: [{id, name, status, reason}]}
// and exits 1 when a MUST failed ("error"); failed SHOULD/MAY audits are "warn" and exit 0.
import { auditServer } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs <url>');
  process.exit(2);
}
const results = await auditServer({ url, fetchFn: fetch });
const report = [];
for (const result of results) {
  const entry = { id: result.id, name: result.name, status: result.status };
  if (result.status !== 'ok') entry.reason = result.reason;
  report.push(entry);
}
console.log(JSON.stringify({ results: report }));
process.exit(report.some((entry) => entry.status === 'error') ? 1 : 0);
