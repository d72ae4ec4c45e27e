// Building the page: elements from plain values (text is always set as text, never as HTML,
// since everything shown comes from the memories themselves), and the formats used throughout.

const SVG = "http://www.w3.org/2000/svg";

function fill(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") el.textContent = String(value);
    else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h("a", {href: "#/x", class: "y"}, "text", otherElement). */
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element, the same way. */
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG, tag), attrs, children);
}

/** A time as people read it (UTC, to the second), or a dash. */
export function when(value) {
  if (!value) return "—";
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/Z$/, " UTC");
}

/** A <time> element for a stored time: readable text, the exact value in datetime. */
export function time(value) {
  if (!value) return h("span", { class: "muted" }, "—");
  return h("time", { datetime: value, title: value }, when(value));
}

/** A number to a few digits. */
export function num(value, digits = 3) {
  if (value === undefined || value === null) return "—";
  return Number(value).toFixed(digits).replace(/\.?0+$/, "") || "0";
}

/** A count and its noun: "1 fact", "2 facts". */
export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Who made a change, and why: " — by NAME, because REASON". */
export function byWhom(actor, reason) {
  return ` — by ${actor || "unknown"}${reason ? `, because ${reason}` : ""}`;
}

/** A short form of an id, for where the full id would crowd the line. */
export function short(id) {
  return id ? String(id).slice(0, 8) : "—";
}

/** A link to a fact's page. */
export function factLink(ns, id, label) {
  const href = `#/fact?ns=${encodeURIComponent(ns)}&id=${encodeURIComponent(id)}`;
  return h("a", { href, class: "fact-link", dataset: { id } }, label ?? short(id));
}

/** A badge: a fact's status or tier. */
export function badge(value, kind = "status") {
  return h("span", { class: `badge ${kind}-${value}` }, value);
}

/** A definition list from [term, description] pairs (empty descriptions left out). */
export function dl(pairs, attrs = {}) {
  return h(
    "dl",
    attrs,
    pairs
      .filter(([, v]) => v !== undefined && v !== null && v !== "")
      .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]),
  );
}

/** A labelled text input, its label above it. */
export function field(id, label, attrs = {}, hint = undefined) {
  const hintId = hint ? `${id}-hint` : undefined;
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    h("input", { id, name: id, type: "text", "aria-describedby": hintId, ...attrs }),
    hint ? h("small", { id: hintId, class: "hint" }, hint) : null,
  );
}

/** A section with a heading (its level given) that labels it. */
export function section(id, title, level = 2, ...children) {
  const headingId = `${id}-title`;
  return h(
    "section",
    { id, "aria-labelledby": headingId },
    h(`h${level}`, { id: headingId }, title),
    ...children,
  );
}

/** A table from column names and rows of cells. */
export function table(columns, rows, attrs = {}) {
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      attrs,
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))),
    ),
  );
}

/** Text that says there is nothing to show. */
export function none(text) {
  return h("p", { class: "muted none" }, text);
}

/** The values of a form's inputs, trimmed, the empty ones left out. */
export function values(form) {
  const out = {};
  for (const el of form.elements) {
    if (!el.name) continue;
    if (el.type === "checkbox") out[el.name] = el.checked;
    else if (el.value.trim() !== "") out[el.name] = el.value.trim();
  }
  return out;
}

/** Words for a time time-inputs accept. */
export const TIME_HINT =
  "ISO 8601 with a zone (2026-03-01T09:00:00Z), a date, now, yesterday, or 3 days ago.";
