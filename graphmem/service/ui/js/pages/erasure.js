// Erasure: forget (a preview first, then the erasure for good, with a write key) and the
// verification that an erased fact or message left no trace (any key).

import { call } from "../api.js";
import { factLink, field, h, none, plural, section, short, time, values } from "../dom.js";

export const title = () => "Erasure";

function selector(v) {
  const ids = (v.ids || "").split(/[\s,]+/).filter(Boolean);
  if (v.by === "ids") return ids.length ? { ids } : null;
  if (v.by === "source") return v.source ? { source: v.source } : null;
  if (v.by === "session") return v.session ? { session: v.session } : null;
  return null;
}

function report(ns, result) {
  const kept = Object.entries(result.messages_kept || {});
  const same = Object.entries(result.same_text_kept || {});
  const ids = (list) => (list.length ? h("ul", { class: "inline" }, list.map((id) => h("li", {}, factLink(ns, id)))) : "none");
  return h(
    "div",
    { class: "forget-report" },
    h("p", {}, result.dry_run ? "Would erase " : "Erased ", `${plural(result.facts.length, "fact")} and ${plural(result.episodes.length, "message")}`, result.dry_run ? "" : [" at ", time(result.at)], ` (erasure ${short(result.erasure)}).`),
    h("dl", {},
      h("dt", {}, "Facts"), h("dd", {}, ids(result.facts)),
      h("dt", {}, "Messages"), h("dd", {}, ids(result.episodes)),
      result.derived.length ? [h("dt", {}, "Facts that go with their messages"), h("dd", {}, ids(result.derived))] : "",
      result.already_forgotten.length ? [h("dt", {}, "Already forgotten"), h("dd", {}, result.already_forgotten.join(", "))] : "",
      result.flagged.length ? [h("dt", {}, "Flagged for review"), h("dd", {}, h("ul", {}, result.flagged.map((f) => h("li", {}, factLink(ns, f.flagged), ` rested on ${short(f.cause)} (${f.relation})`))))] : "",
      kept.length ? [h("dt", {}, "Messages kept (not named)"), h("dd", {}, kept.map(([id, m]) => `${short(id)}: ${m.map(short).join(", ")}`).join("; "))] : "",
      same.length ? [h("dt", {}, "Same words kept in"), h("dd", {}, same.map(([id, m]) => `${short(id)}: ${m.map(short).join(", ")}`).join("; "))] : "",
    ),
  );
}

function verification(v) {
  const clean = v.tombstones > 0 && !v.findings.length;
  return h(
    "div",
    { class: `verify-report ${clean ? "clean" : "dirty"}`, dataset: { target: v.target, clean: String(clean) } },
    h("p", {}, h("strong", {}, clean ? "No trace left" : v.tombstones ? "Traces found" : "Nothing erased under this name"),
      ` for ${v.target}: matched ${v.matched}, ${v.tombstones} tombstone${v.tombstones === 1 ? "" : "s"}.`),
    h("details", {}, h("summary", {}, `${v.checks.length} checks`), h("ul", {}, v.checks.map((c) => h("li", {}, c)))),
    v.findings.length ? h("ul", { class: "findings" }, v.findings.map((f) => h("li", {}, `${f.check} in ${f.where}: ${f.detail}`))) : "",
  );
}

function verify(ctx, target, text) {
  return call("verify", { ns: ctx.ns }, { target, text: text || undefined });
}

function verifyForm(ctx) {
  const out = h("div", { id: "verify-result", "aria-live": "polite" });
  const form = h(
    "form",
    { id: "verify-form" },
    h("div", { class: "row" },
      field("target", "Erased id, source, session or erasure id", { required: true }),
      field("vtext", "Its words (optional)", {}, "Also searched for in the indexes, and never stored.")),
    h("button", { type: "submit" }, "Verify"),
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const v = values(form);
    out.replaceChildren();
    try {
      out.append(verification(await verify(ctx, v.target, v.vtext)));
    } catch (error) {
      ctx.say(error.message, "error");
    }
  });
  return form;
}

function forgetForm(ctx) {
  if (!ctx.can("forget")) return h("p", { class: "muted" }, "Erasing needs a write key; this key can verify erasures.");
  const preset = ctx.params.get("ids") || "";
  const by = h("select", { id: "by", name: "by" }, [["ids", "These ids"], ["source", "Everything from a source"], ["session", "A session's messages"]].map(([v, l]) => h("option", { value: v }, l)));
  const out = h("div", { id: "forget-result", "aria-live": "polite" });
  const form = h(
    "form",
    { id: "forget-form" },
    h("div", { class: "field" }, h("label", { for: "by" }, "Erase"), by),
    h("div", { class: "field" }, h("label", { for: "ids" }, "Ids (one a line)"), h("textarea", { id: "ids", name: "ids", rows: 3 }, preset)),
    h("div", { class: "row" }, field("forget-source", "Source", { name: "source" }), field("forget-session", "Session", { name: "session" })),
    field("reason", "Reason", { required: true, placeholder: "a privacy request" }, "Kept on the tombstone; the words themselves are not."),
    h("button", { type: "submit", "data-write": "forget" }, "Preview"),
    out,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const v = values(form);
    const target = selector(v);
    if (!target) return ctx.say("Name what to erase: ids, a source or a session.", "error");
    out.replaceChildren(h("p", { class: "muted" }, "Previewing…"));
    try {
      const preview = await call("forget", { ns: ctx.ns }, { ...target, reason: v.reason, confirm: false });
      const go = h("button", { type: "button", id: "forget-confirm", "data-write": "forget", class: "danger" }, "Erase for good");
      go.addEventListener("click", () => erase(ctx, out, target, v.reason, go));
      out.replaceChildren(h("h3", {}, "Preview: nothing was erased yet"), report(ctx.ns, preview),
        preview.facts.length + preview.episodes.length ? go : none("Nothing to erase."));
      go.focus?.();
    } catch (error) {
      out.replaceChildren();
      ctx.say(error.message, "error");
    }
  });
  return form;
}

async function erase(ctx, out, target, reason, button) {
  button.disabled = true;
  try {
    const done = await call("forget", { ns: ctx.ns }, { ...target, reason, confirm: true });
    out.replaceChildren(h("h3", {}, "Erased"), report(ctx.ns, done), h("h3", {}, "Verification"));
    const ids = [...done.facts, ...done.episodes].slice(0, 20);
    out.append(...(await Promise.all(ids.map((id) => verify(ctx, id)))).map(verification));
    ctx.say(`Erased ${plural(done.facts.length, "fact")} and ${plural(done.episodes.length, "message")}; verification below.`);
  } catch (error) {
    button.disabled = false;
    ctx.say(error.message, "error");
  }
}

export async function render(ctx) {
  if (!ctx.ns) return [h("h1", {}, "Erasure"), none("Pick a namespace first.")];
  return [
    h("h1", {}, "Erasure"),
    section("forget", "Forget", 2, h("p", {}, "Erasure is for good: the words leave the graph and the indexes, and a tombstone keeps when, by whom and why. The preview lists what would go, what would be flagged for review, and what keeps the same words."), forgetForm(ctx)),
    section("verify", "Verify an erasure", 2, verifyForm(ctx)),
  ];
}
