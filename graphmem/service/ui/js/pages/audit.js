// Audit: what was believed at a date (and true at another), what changed between two dates,
// the believed count over time, contradictions, and review flags (confirmed with a write key).

import { attempt, call } from "../api.js";
import { TIME_HINT, badge, byWhom, factLink, field, h, none, section, short, table, time, values } from "../dom.js";
import { beliefChart, beliefSteps, pointsTable } from "../charts.js";

export const title = () => "Audit";

function form(id, fields, button, onSubmit) {
  const el = h("form", { id, class: "inline-form" }, h("div", { class: "row" }, fields), h("button", { type: "submit" }, button));
  el.addEventListener("submit", (event) => {
    event.preventDefault();
    onSubmit(values(el));
  });
  return el;
}

function beliefsForm(ctx) {
  const p = ctx.params;
  return form(
    "beliefs-form",
    [
      field("as_of", "Believed as of", { value: p.get("as_of") || "", placeholder: "now" }, TIME_HINT),
      field("valid_at", "True at", { value: p.get("valid_at") || "", placeholder: "any time" }),
      field("bq", "About", { value: p.get("bq") || "", placeholder: "everything" }),
    ],
    "Show beliefs",
    (v) => ctx.go("audit", { ...keep(p), as_of: v.as_of || "", valid_at: v.valid_at || "", bq: v.bq || "" }),
  );
}

function beliefsPart(ctx, result) {
  const f = beliefsForm(ctx);
  const list = result.facts.length
    ? h(
        "ul",
        { id: "beliefs", class: "facts" },
        result.facts.map((fact) =>
          h("li", { dataset: { id: fact.id } }, factLink(ctx.ns, fact.id, fact.text), " ", badge(fact.status), h("span", { class: "muted" }, " since ", time(fact.recorded_at))),
        ),
      )
    : none("Nothing was believed then.");
  return section(
    "beliefs-section",
    "What was believed",
    2,
    f,
    h("p", { id: "beliefs-summary" }, `${result.facts.length}${result.truncated ? "+" : ""} fact${result.facts.length === 1 ? "" : "s"} believed `, result.as_of ? ["at ", time(result.as_of)] : "now",
      result.valid_at ? [", true at ", time(result.valid_at)] : "",
      result.forgotten.length ? `; ${result.forgotten.length} believed then have been forgotten since` : ""),
    list,
  );
}

function change(ns, c) {
  return h(
    "li",
    { dataset: { id: c.fact_id, change: c.change } },
    time(c.at),
    " ",
    badge(c.change, "event"),
    " ",
    c.text === null ? h("em", {}, "forgotten since") : factLink(ns, c.fact_id, c.text),
    c.by ? [" → ", factLink(ns, c.by, c.by_text || short(c.by))] : "",
    h("span", { class: "muted" }, byWhom(c.actor, c.reason)),
  );
}

function diffForm(ctx) {
  const p = ctx.params;
  return form(
    "diff-form",
    [
      field("since", "Changes after", { value: p.get("since") || "", required: true, placeholder: "1 day ago" }, TIME_HINT),
      field("until", "Up to", { value: p.get("until") || "", placeholder: "now" }),
    ],
    "Compare",
    (v) => ctx.go("audit", { ...keep(p), since: v.since || "", until: v.until || "" }),
  );
}

function diffPart(ctx, diff) {
  const f = diffForm(ctx);
  if (!diff) return section("diff", "What changed between two dates", 2, f);
  const list = (id, heading, items, make) =>
    h("div", { id }, h("h3", {}, `${heading} (${items.length})`), items.length ? h("ul", { class: "changes" }, items.map(make)) : none("None."));
  return section(
    "diff",
    "What changed between two dates",
    2,
    f,
    h("p", {}, "From ", time(diff.since), " to ", time(diff.until), ":"),
    list("diff-believed", "Became believed", diff.believed, (c) => change(ctx.ns, c)),
    list("diff-retired", "Stopped being believed", diff.retired, (c) => change(ctx.ns, c)),
    list("diff-forgotten", "Forgotten", diff.forgotten, (g) => h("li", {}, time(g.erased_at), ` ${g.kind} ${short(g.id)}${byWhom(g.actor, g.reason)}`)),
    list("diff-opened", "Contradictions opened", diff.contradictions_opened, (c) => contradiction(ctx.ns, c)),
    list("diff-resolved", "Contradictions resolved", diff.contradictions_resolved, (c) => contradiction(ctx.ns, c)),
  );
}

function contradiction(ns, c) {
  const side = (id, text) => (text === null ? h("em", {}, `${short(id)} (forgotten)`) : factLink(ns, id, text));
  return h(
    "li",
    {},
    side(c.a, c.a_text),
    " ⟷ ",
    side(c.b, c.b_text),
    h("span", { class: "muted" }, " — opened ", time(c.at), ` by ${c.actor || "unknown"}${c.reason ? ` (${c.reason})` : ""}`),
    c.resolved_at ? h("span", {}, "; resolved ", time(c.resolved_at), ` by ${c.resolved_by || "unknown"}, keeping `, factLink(ns, c.kept), c.resolution ? ` (${c.resolution})` : "") : h("strong", { class: "attention" }, " open"),
  );
}

function reviewPart(ctx, flags) {
  const rows = flags.map((flag) => {
    const cells = [
      flag.flagged_kind === "fact" ? factLink(ctx.ns, flag.flagged_id, flag.text) : flag.text,
      `${flag.event} of ${short(flag.cause_id)} (${flag.relation})`,
      time(flag.at),
      flag.actor || "—",
    ];
    if (ctx.can("confirm")) {
      const reason = h("input", { type: "text", name: "reason", "aria-label": `Reason for confirming ${short(flag.flagged_id)}`, placeholder: "checked, still holds" });
      const button = h("button", { type: "submit", "data-write": "confirm" }, "Confirm");
      const f = h("form", { class: "confirm-form", dataset: { id: flag.flagged_id } }, reason, button);
      f.addEventListener("submit", async (event) => {
        event.preventDefault();
        button.disabled = true;
        try {
          await call("confirm", { ns: ctx.ns, id: flag.flagged_id }, { reason: reason.value.trim() || undefined });
          if (!ctx.stale()) ctx.go("audit", keep(ctx.params), `Confirmed ${short(flag.flagged_id)}: its review flags are closed.`);
        } catch (error) {
          button.disabled = false;
          ctx.say(error.message, "error");
        }
      });
      cells.push(f);
    }
    return cells;
  });
  const columns = ["Flagged", "Because", "Since", "By", ...(ctx.can("confirm") ? ["Confirm it still holds"] : [])];
  return section("review", "Open review flags", 2, rows.length ? table(columns, rows, { id: "review-flags" }) : none("No open review flags."));
}

function keep(p) {
  const out = {};
  for (const name of ["as_of", "valid_at", "bq", "since", "until"]) if (p.get(name)) out[name] = p.get(name);
  return out;
}

/** Every change since the beginning (facts erased since included), for the chart. */
const BEGINNING = "1970-01-01T00:00:00Z";

export async function render(ctx) {
  if (!ctx.ns) return [h("h1", {}, "Audit"), none("Pick a namespace first.")];
  const p = ctx.params;
  const ns = { ns: ctx.ns };
  const query = { as_of: p.get("as_of") || undefined, query: p.get("bq") || undefined, limit: 200 };
  const [beliefs, diff, life, contradictions, flags] = await Promise.all([
    attempt(p.get("valid_at") ? call("truths", ns, { ...query, valid_at: p.get("valid_at") }) : call("beliefs", ns, query)),
    p.get("since") ? attempt(call("diff", ns, { since: p.get("since"), until: p.get("until") || undefined })) : { ok: null },
    call("diff", ns, { since: BEGINNING }),
    call("contradictions", ns, { open_only: false, limit: 200 }),
    call("review", ns, { open_only: true, limit: 200 }),
  ]);
  const points = beliefSteps(life);
  const chart = points.length
    ? [beliefChart(points, (t) => ctx.go("audit", { ...keep(p), as_of: t.toISOString() })), pointsTable(points)]
    : none("Nothing recorded yet.");
  return [
    h("h1", {}, "Audit"),
    section("chart", "Facts believed over time", 2, h("div", { class: "picture" }, chart)),
    beliefs.refused ? section("beliefs-section", "What was believed", 2, beliefsForm(ctx), ctx.refused(beliefs.refused)) : beliefsPart(ctx, beliefs.ok),
    diff.refused ? section("diff", "What changed between two dates", 2, diffForm(ctx), ctx.refused(diff.refused)) : diffPart(ctx, diff.ok),
    section(
      "contradictions",
      "Contradictions",
      2,
      contradictions.length ? h("ul", { class: "changes" }, contradictions.map((c) => contradiction(ctx.ns, c))) : none("No contradictions."),
    ),
    reviewPart(ctx, flags),
  ];
}
