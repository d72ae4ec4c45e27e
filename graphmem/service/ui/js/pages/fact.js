// A fact: its text, both clocks, tags and importance, and its history as a picture and a list.

import { ApiError, call } from "../api.js";
import { badge, dl, factLink, h, none, num, section, short, time } from "../dom.js";
import { historyPicture } from "../charts.js";

export const title = (ctx) => `Fact ${short(ctx.params.get("id"))}`;

function clocks(f) {
  return dl(
    [
      ["Status", [badge(f.status), " ", badge(f.tier, "tier"), f.pinned ? [" ", badge("pinned", "flag")] : ""]],
      ["Believed from", time(f.recorded_at)],
      ["Believed until", f.retired_at ? time(f.retired_at) : "now (still believed)"],
      ["True from", f.valid_from ? time(f.valid_from) : "not stated"],
      ["True until", f.valid_to ? time(f.valid_to) : "open"],
      ["Recorded by", f.recorded_by || "—"],
      ["Replaced by", f.superseded_by ? factLink(f.ns, f.superseded_by) : undefined],
      ["Retracted because", f.retraction_reason || undefined],
      ["Source", f.source || undefined],
      ["Tags", f.tags.length ? f.tags.join(", ") : undefined],
      ["Importance", f.importance === null ? undefined : num(f.importance)],
      ["Recalled", [`${f.access_count} time${f.access_count === 1 ? "" : "s"}`, f.last_accessed_at ? [", last ", time(f.last_accessed_at)] : ""]],
      ["Summarises", f.summarizes.length ? h("ul", { class: "inline" }, f.summarizes.map((id) => h("li", {}, factLink(f.ns, id)))) : undefined],
    ],
    { id: "clocks" },
  );
}

function open(f) {
  const items = [
    ...f.contradictions.map((c) => h("li", {}, "Contradicted by ", factLink(f.ns, c.id, c.text), c.reason ? ` (${c.reason})` : "", ", since ", time(c.at))),
    ...f.review.map((r) => h("li", {}, `Flagged for review: ${r.event} of `, factLink(f.ns, r.cause_id), ` (${r.relation}), `, time(r.at))),
  ];
  return items.length ? section("open", "Open questions", 2, h("ul", {}, items)) : "";
}

function events(ns, timeline) {
  return h(
    "ol",
    { id: "events" },
    timeline.events.map((e) =>
      h(
        "li",
        { class: `event-item kind-${e.kind}`, dataset: { kind: e.kind, fact: e.fact_id } },
        time(e.at),
        " ",
        badge(e.kind, "event"),
        " ",
        h("span", { class: "words" }, e.words),
        e.actor && !e.words.includes(e.actor) ? h("span", { class: "who muted" }, ` — by ${e.actor}`) : "",
        " ",
        e.fact_id !== timeline.fact_id ? factLink(ns, e.fact_id) : "",
      ),
    ),
  );
}

function episode(e) {
  return [
    h("h1", {}, "Message"),
    h("blockquote", { id: "fact-text" }, e.content),
    dl([
      ["Role", e.role],
      ["Speaker", e.speaker],
      ["Session", e.session_id],
      ["Sent", e.occurred_at ? time(e.occurred_at) : undefined],
      ["Recorded", time(e.recorded_at)],
      ["Recorded by", e.recorded_by],
    ]),
  ];
}

export async function render(ctx) {
  const id = ctx.params.get("id");
  if (!id) return [h("h1", {}, "Fact"), none("No fact named: open one from a search.")];
  const item = await call("get", { ns: ctx.ns, id });
  if (!("status" in item)) return episode(item);
  const [timeline, why] = await Promise.all([
    call("timeline", { ns: ctx.ns, id: item.id }),
    call("explain", { ns: ctx.ns, id: item.id }).catch((e) => (e instanceof ApiError ? null : Promise.reject(e))),
  ]);
  const openFact = (other) => ctx.go("fact", { id: other });
  return [
    h("h1", {}, "Fact ", h("code", {}, short(item.id))),
    h("blockquote", { id: "fact-text" }, item.text),
    why ? h("p", { id: "explanation" }, why.text) : "",
    clocks(item),
    open(item),
    section(
      "history-section",
      "History",
      2,
      h("p", { class: "muted" }, `${timeline.facts.length} fact${timeline.facts.length === 1 ? "" : "s"} in its line; `,
        timeline.head_id ? ["it leads to ", factLink(ctx.ns, timeline.head_id), " now."] : "none of them is believed now."),
      h("div", { class: "picture" }, historyPicture(timeline, item.id, openFact)),
      h("p", { class: "legend muted" }, "Boxes: green believed, grey superseded, amber merged, red retracted; a dashed edge is an open end. Dots under the axis: events."),
      h("h3", {}, "Every change, in order"),
      events(ctx.ns, timeline),
      timeline.runs.length
        ? h("p", {}, "Consolidation runs: ", timeline.runs.map((r) => h("a", { href: `#/consolidation?ns=${encodeURIComponent(ctx.ns)}&run=${encodeURIComponent(r.id)}` }, short(r.id), " ")))
        : "",
    ),
  ];
}
