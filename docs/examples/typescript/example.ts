// Remember, supersede and recall through the REST API of `graphmem serve`, with the types
// openapi-typescript generated from the server's OpenAPI schema (openapi.d.ts).
//
//   GRAPHMEM_URL  the server (default http://127.0.0.1:8080)
//   GRAPHMEM_KEY  a key that may write the namespace: graphmem keys create my-agent --ns alice
import type { components } from "./openapi";

type Schemas = components["schemas"];
/** What every error answer holds, beside its HTTP status. */
type ErrorAnswer = { error: { type: string; message: string } };

const url = process.env.GRAPHMEM_URL ?? "http://127.0.0.1:8080";
const key = process.env.GRAPHMEM_KEY ?? "";
const ns = process.env.GRAPHMEM_NS ?? "alice";

/** POST a JSON body to a route of the namespace; its answer, or graphmem's error thrown. */
async function post<Answer>(route: string, body: object): Promise<Answer> {
  const response = await fetch(`${url}/v1/namespaces/${encodeURIComponent(ns)}${route}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer: unknown = await response.json();
  if (!response.ok) {
    const { error } = answer as ErrorAnswer;
    throw new Error(`HTTP ${response.status} ${error.type}: ${error.message}`);
  }
  return answer as Answer;
}

const google = await post<Schemas["Fact"]>("/facts", {
  text: "Alice works at Google.",
} satisfies Schemas["RememberRequest"]);

// The update names the fact it replaces: the old one is kept in the history, no longer believed.
await post<Schemas["Fact"]>("/facts", {
  text: "Alice works at Microsoft.",
  supersedes: [google.id],
  reason: "new job",
} satisfies Schemas["RememberRequest"]);

const found = await post<Schemas["RecallResult"]>("/search", {
  query: "Where does Alice work?",
  k: 3,
} satisfies Schemas["RecallRequest"]);
for (const hit of found.hits) {
  console.log(hit.score.toFixed(3), hit.text); // Microsoft, not Google: that one is superseded
}
