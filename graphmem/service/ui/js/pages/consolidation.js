// Consolidation: the runs with what each did, a preview (a dry run) and a run, undo, and the
// summaries with the facts they stand for. Runs and undo need a write key.

import { call } from "../api.js";
import { badge, factLink, h, none, num, section, short, table, time } from "../dom.js";

export const title = () => "Consolidation";

/** The texts of the facts the runs name (at most 60, fetched at once; a fact forgotten since
 * keeps its short id). */
async function texts(ns, runs) {
  const ids = [...new Set(runs.flatMap((r) => [...r.applied, ...r.rejected].flatMap((op) => op.facts)))].slice(0, 60);
  const found = await Promise.all(ids.map((id) => call("get", { ns, id }).catch(() => null)));
  return new Map(found.filter((f) => f && f.text).map((f) => [f.id, f.text]));
}

function operations(ns, applied, rejected, names = new Map()) {
  const link = (id) => [factLink(ns, id, names.get(id) || short(id)), " "];
  const items = [
    ...applied.map((op) =>
      h(
        "li",
        { class: "applied" },
        badge(op.op, "op"),
        " ",
        op.facts.map(link),
        op.tier ? `${op.before ?? "no tier"} → ${op.tier} ` : "",
        op.summary_id ? ["as ", factLink(ns, op.summary_id, op.text || short(op.summary_id)), " "] : "",
        op.reason ? h("span", { class: "muted" }, `— ${op.reason}`) : "",
      ),
    ),
    ...rejected.map((op) =>
      h("li", { class: "rejected" }, badge("rejected", "op"), " ", op.op ? [badge(op.op, "op"), " "] : "the answer ",
        op.facts.map(link), `— refused: ${op.rejection}`),
    ),
  ];
  return items.length ? h("ul", { class: "operations" }, items) : none("No operation.");
}

function undoButton(ctx, run) {
  if (!ctx.can("undo") || run.undone_at || run.status === "dry_run") return "";
  const button = h("button", { type: "button", "data-write": "undo", "aria-label": `Undo run ${short(run.id)}` }, "Undo");
  const holder = h("span", { class: "undo" }, button);
  const undo = async (yes) => {
    yes.disabled = true;
    try {
      const done = await call("undo", { ns: ctx.ns, run_id: run.id }, {});
      if (!ctx.stale()) ctx.go("consolidation", { run: run.id }, `Run ${short(run.id)} undone: ${done.restored_facts} facts restored, ${done.removed_edges} edges removed, ${done.reopened} contradictions reopened, ${done.withdrawn_summaries} summaries withdrawn.`);
    } catch (error) {
      yes.disabled = false;
      ctx.say(error.message, "error");
    }
  };
  button.addEventListener("click", () => {
    const yes = h("button", { type: "button", "data-write": "undo", class: "danger" }, `Yes, undo run ${short(run.id)}`);
    const no = h("button", { type: "button" }, "Keep it");
    yes.addEventListener("click", () => undo(yes));
    no.addEventListener("click", () => {
      holder.replaceChildren(button);
      button.focus();
    });
    holder.replaceChildren(h("span", {}, "The facts it changed get their earlier state back. "), yes, " ", no);
    yes.focus();
  });
  return holder;
}

function runs(ctx, list, names) {
  if (!list.length) return none("No consolidation run yet.");
  return h(
    "ol",
    { id: "runs", class: "runs" },
    list.map((run) =>
      h(
        "li",
        { class: "run", dataset: { id: run.id, status: run.undone_at ? "undone" : run.status } },
        h(
          "div",
          { class: "run-head" },
          h("strong", {}, h("code", {}, short(run.id))),
          " ",
          badge(run.undone_at ? "undone" : run.status, "run"),
          " ",
          time(run.started_at),
          h("span", { class: "muted" }, ` · ${run.proposer}${run.model ? ` (${run.model})` : ""} · asked by ${run.started_by || "unknown"} · ${run.applied.length} applied, ${run.rejected.length} rejected`),
          run.undone_at ? h("span", { class: "muted" }, " · undone ", time(run.undone_at), ` by ${run.undone_by || "unknown"}`) : "",
          " ",
          undoButton(ctx, run),
        ),
        h("details", { open: ctx.params.get("run") === run.id }, h("summary", {}, "What it did"), operations(ctx.ns, run.applied, run.rejected, names), run.error ? h("p", { class: "error" }, run.error) : ""),
      ),
    ),
  );
}

function controls(ctx) {
  if (!ctx.can("consolidate")) return h("p", { class: "muted" }, "Runs need a write key; this key can read them.");
  const force = h("input", { id: "force", type: "checkbox" });
  const out = h("div", { id: "preview-result", "aria-live": "polite" });
  const runIt = async (confirm) => {
    out.replaceChildren(h("p", { class: "muted" }, confirm ? "Running…" : "Previewing…"));
    try {
      const result = await call("consolidate", { ns: ctx.ns }, { force: force.checked, confirm });
      if (confirm) {
        if (!ctx.stale()) ctx.go("consolidation", { run: result.run_id || "" }, `Run ${short(result.run_id)} ${result.status}: ${result.applied.length} operations applied.`);
        return;
      }
      out.replaceChildren(
        h("h3", {}, "Preview: nothing was written"),
        h("p", {}, `Status ${result.status}${result.reason ? ` (${result.reason})` : ""} · ${result.clusters} clusters, ${result.proposed} operations proposed by ${result.proposer} · ${num(result.timings.total ?? 0, 2)} s`),
        operations(ctx.ns, result.applied, result.rejected),
      );
    } catch (error) {
      out.replaceChildren();
      ctx.say(error.message, "error");
    }
  };
  return h(
    "div",
    { class: "controls" },
    h("div", { class: "field check" }, force, h("label", { for: "force" }, "Run even if the gate says nothing new has come in")),
    h("button", { type: "button", id: "preview", "data-write": "consolidate", onclick: () => runIt(false) }, "Preview a run"),
    " ",
    h("button", { type: "button", id: "run", "data-write": "consolidate", onclick: () => runIt(true) }, "Run and apply"),
    out,
  );
}

async function summaries(ctx) {
  const believed = await call("beliefs", { ns: ctx.ns }, { limit: 1000 });
  const texts = new Map(believed.facts.map((f) => [f.id, f.text]));
  const list = believed.facts.filter((f) => f.summarizes.length);
  if (!list.length) return none("No believed summary.");
  return table(
    ["Summary", "Members"],
    list.map((f) => [factLink(ctx.ns, f.id, f.text), h("ul", { class: "members" }, f.summarizes.map((id) => h("li", {}, factLink(ctx.ns, id, texts.get(id) || short(id)))))]),
    { id: "summaries-table" },
  );
}

export async function render(ctx) {
  if (!ctx.ns) return [h("h1", {}, "Consolidation"), none("Pick a namespace first.")];
  const [list, sums] = await Promise.all([call("runs", { ns: ctx.ns }, { limit: 50 }), summaries(ctx)]);
  const names = await texts(ctx.ns, list);
  return [
    h("h1", {}, "Consolidation"),
    section("run-controls", "Run", 2, h("p", {}, "A run proposes merges, tier moves and summaries; graphmem validates them and applies them in one transaction, and any run can be undone. A preview shows what a run would do and writes nothing."), controls(ctx)),
    section("runs-section", "Runs", 2, runs(ctx, list, names)),
    section("summaries", "Summaries", 2, sums),
  ];
}
