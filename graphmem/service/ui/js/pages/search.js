// Search: a recall with its times and filters; each hit with its score, how the score was
// made, where it came from, its status and tier.

import { attempt, call } from "../api.js";
import { TIME_HINT, badge, dl, factLink, field, h, none, num, short, time, values } from "../dom.js";

export const title = (ctx) => (ctx.params.get("q") ? `Search: ${ctx.params.get("q")}` : "Search");

const KEEP = ["q", "as_of", "valid_at", "tags", "speakers", "since", "until", "k", "retired", "kinds"];

function form(ctx) {
  const p = ctx.params;
  const kinds = h(
    "select",
    { id: "kinds", name: "kinds" },
    [
      ["", "Facts and messages"],
      ["fact", "Facts"],
      ["episode", "Messages"],
    ].map(([v, label]) => h("option", { value: v, selected: (p.get("kinds") || "") === v }, label)),
  );
  const el = h(
    "form",
    { id: "search-form", role: "search" },
    field("q", "Question", { value: p.get("q") || "", required: true, type: "search" }),
    h(
      "div",
      { class: "row" },
      field("as_of", "Believed as of", { value: p.get("as_of") || "", placeholder: "now" }, TIME_HINT),
      field("valid_at", "True at", { value: p.get("valid_at") || "", placeholder: "any time" }),
    ),
    h(
      "details",
      { class: "filters", open: KEEP.slice(3).some((k) => p.get(k)) },
      h("summary", {}, "Filters"),
      h(
        "div",
        { class: "row" },
        field("tags", "Tags", { value: p.get("tags") || "" }, "Comma-separated; a hit has one of them."),
        field("speakers", "Speakers", { value: p.get("speakers") || "" }),
        field("since", "Said since", { value: p.get("since") || "" }),
        field("until", "Said until", { value: p.get("until") || "" }),
        field("k", "Hits", { value: p.get("k") || "", type: "number", min: 1, max: 100, placeholder: "10" }),
        h("div", { class: "field" }, h("label", { for: "kinds" }, "Kinds"), kinds),
        h(
          "div",
          { class: "field check" },
          h("input", { id: "retired", name: "retired", type: "checkbox", checked: p.get("retired") === "1" }),
          h("label", { for: "retired" }, "Include facts no longer believed"),
        ),
      ),
    ),
    h("button", { type: "submit" }, "Search"),
  );
  el.addEventListener("submit", (event) => {
    event.preventDefault();
    const v = values(el);
    const params = {};
    for (const name of KEEP) if (v[name] !== undefined) params[name] = v[name];
    params.retired = v.retired ? "1" : "";
    ctx.go("search", params);
  });
  return el;
}

function request(p) {
  const list = (name) => (p.get(name) ? p.get(name).split(",").map((t) => t.trim()).filter(Boolean) : undefined);
  return {
    query: p.get("q"),
    k: p.get("k") ? Number(p.get("k")) : undefined,
    as_of: p.get("as_of") || undefined,
    valid_at: p.get("valid_at") || undefined,
    tags: list("tags"),
    speakers: list("speakers"),
    since: p.get("since") || undefined,
    until: p.get("until") || undefined,
    kinds: p.get("kinds") ? [p.get("kinds")] : undefined,
    include_retired: p.get("retired") === "1" || undefined,
    // A person looking is not the agent using a memory: the search counts no access, so it
    // leaves importance and tiers as they were.
    track_access: false,
  };
}

function breakdown(sc) {
  return h(
    "details",
    { class: "breakdown" },
    h("summary", {}, "How it scored"),
    dl([
      ["Vector (cosine)", sc.vector === null ? "no match" : `${num(sc.vector)} (rank ${sc.vector_rank})`],
      ["Fulltext (Lucene)", sc.fulltext === null ? "no match" : `${num(sc.fulltext)} (rank ${sc.fulltext_rank})`],
      ["Fused", num(sc.fused, 4)],
      ["Recency ×", num(sc.recency)],
      ["Importance", sc.importance === null ? undefined : num(sc.importance)],
      ["Cues ×", num(sc.cue)],
      ["Words found", `${Math.round(sc.lexical * 100)} %`],
      ["Rank score", num(sc.final, 4)],
      ["Placed above", sc.placed_above ? short(sc.placed_above) : undefined],
    ]),
  );
}

function provenance(ns, prov) {
  if (!prov.messages.length) return h("p", { class: "provenance muted" }, "Stated directly (no message behind it).");
  return h(
    "div",
    { class: "provenance" },
    h("span", {}, `From ${prov.messages.length} message${prov.messages.length > 1 ? "s" : ""}: `),
    h(
      "ul",
      { class: "inline" },
      prov.messages.map((m) =>
        h(
          "li",
          {},
          factLink(ns, m.episode_id, m.external_id || short(m.episode_id)),
          m.session_id ? ` in ${m.session_id}` : "",
          m.occurred_at ? [" at ", time(m.occurred_at)] : "",
        ),
      ),
    ),
  );
}

function hit(ns, x, i) {
  const f = x.fact;
  const meta = f
    ? [badge(f.status), " ", badge(f.tier, "tier"), f.pinned ? [" ", badge("pinned", "flag")] : "",
        f.contradictions.length ? [" ", badge("contradicted", "flag")] : ""]
    : [badge("message", "kind"), x.episode && x.episode.speaker ? ` ${x.episode.speaker}` : ""];
  const via =
    x.via === "search" ? "" : x.via === "supersession"
      ? ["Found through ", factLink(ns, x.superseded_match), ", which it replaced."]
      : ["Referenced from ", factLink(ns, x.referenced_from), "."];
  return h(
    "li",
    { class: "hit", dataset: { id: x.id, kind: x.kind } },
    h(
      "div",
      { class: "hit-head" },
      h("span", { class: "score", title: "The probability that it answers the question" }, `${Math.round(x.score * 100)} %`),
      h("span", { class: "meta" }, meta),
    ),
    h("p", { class: "hit-text" }, factLink(ns, x.id, x.text)),
    h("p", { class: "when muted" }, f ? ["Believed since ", time(f.recorded_at), f.valid_from ? [" · true from ", time(f.valid_from)] : ""] : ["Said ", time(x.episode?.occurred_at || x.episode?.recorded_at)]),
    via ? h("p", { class: "via" }, via) : "",
    breakdown(x.scores),
    provenance(ns, x.provenance),
  );
}

export async function render(ctx) {
  const out = [h("h1", {}, "Search"), form(ctx)];
  if (!ctx.ns) return [...out, none("Pick a namespace first.")];
  if (!ctx.params.get("q")) return out;
  const answer = await attempt(call("recall", { ns: ctx.ns }, request(ctx.params)));
  if (answer.refused) return [...out, ctx.refused(answer.refused)]; // the form stays to correct it
  const result = answer.ok;
  const said = [
    `${result.hits.length} hit${result.hits.length === 1 ? "" : "s"}`,
    result.as_of ? [" as believed at ", time(result.as_of)] : " as believed now",
    result.valid_at ? [", true at ", time(result.valid_at)] : "",
    ` · ${result.candidates} candidates, ${result.gated} below the quality gate · ${num(result.timing.total_ms, 0)} ms`,
  ];
  return [
    ...out,
    h("h2", { id: "hits-title" }, "Hits"),
    h("p", { id: "hits-summary" }, said),
    result.hits.length
      ? h("ol", { id: "hits", "aria-labelledby": "hits-title" }, result.hits.map((x, i) => hit(ctx.ns, x, i)))
      : none("Nothing matched."),
  ];
}
