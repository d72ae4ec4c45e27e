// Namespaces: those the key opens that hold something, with their counts.

import { call } from "../api.js";
import { h, none, num, table, time } from "../dom.js";

export const title = () => "Namespaces";

function link(page, ns, label) {
  return h("a", { href: `#/${page}?ns=${encodeURIComponent(ns)}` }, label);
}

function byStatus(stats) {
  const parts = Object.entries(stats.facts_by_status || {}).map(([k, v]) => `${v} ${k}`);
  return parts.length ? parts.join(", ") : "—";
}

function attention(count, label) {
  return count ? h("strong", { class: "attention" }, `${count} ${label}`) : "0";
}

export async function render(ctx) {
  const listed = await call("namespaces");
  const stats = await Promise.all(listed.map((n) => call("stats", { ns: n.ns })));
  const rows = stats.map((st, i) => [
    h("span", {}, link("search", st.ns, st.ns)),
    byStatus(st),
    `${num(st.hot, 0)} hot · ${num(st.cold, 0)} cold · ${num(st.summaries, 0)} summaries`,
    num(st.episodes, 0),
    time(listed[i].last_write_at || st.last_recorded_at),
    attention(st.contradictions_open, "open"),
    attention(st.review_open, "open"),
    link("consolidation", st.ns, `${listed[i].consolidation_runs}`),
    `${st.forgotten_facts + st.forgotten_episodes}`,
    h("span", { class: "actions" }, link("audit", st.ns, "Audit")),
  ]);
  const prefix = ctx.me.prefix;
  const about = prefix === "" ? "This key opens every namespace." : prefix
    ? `This key opens the namespaces starting with “${prefix}”` +
      (ctx.me.namespaces.length ? ` and ${ctx.me.namespaces.join(", ")}.` : ".")
    : `This key opens ${ctx.me.namespaces.join(", ") || "no namespace"}.`;
  return [
    h("h1", {}, "Namespaces"),
    h("p", {}, about, " Those holding something:"),
    rows.length
      ? table(
          [
            "Namespace",
            "Facts by status",
            "Tiers",
            "Messages",
            "Last write",
            "Contradictions",
            "Review flags",
            "Consolidation runs",
            "Forgotten",
            "",
          ],
          rows,
          { id: "namespaces" },
        )
      : none("None of the key's namespaces holds anything yet."),
  ];
}
