// The two pictures, drawn as SVG: a fact's history on both clocks, and the number of facts
// believed over time. Each has a text equivalent on its page (the event list, the table).

import { h, s, table, when } from "./dom.js";

const W = 900;
const PAD = { left: 70, right: 20, top: 20, bottom: 70 };

function scale(lo, hi, a, b) {
  const span = hi - lo || 1;
  return (v) => a + ((v - lo) / span) * (b - a);
}

/** A time on an axis that spans ``span`` ms: the time of day, the day and hour, or the date. */
function timeLabel(t, span) {
  const iso = new Date(t).toISOString();
  if (span < 86400e3) return iso.slice(11, 19);
  return span < 400 * 86400e3 ? iso.slice(5, 16).replace("T", " ") : iso.slice(0, 10);
}

function ticks(lo, hi, n) {
  return Array.from({ length: n + 1 }, (_, i) => lo + ((hi - lo) * i) / n);
}

function axes(x, y, lo, hi, H, yLabels) {
  const g = s("g", { class: "axes", "aria-hidden": "true" });
  g.append(s("line", { x1: PAD.left, x2: W - PAD.right, y1: H - PAD.bottom, y2: H - PAD.bottom }));
  g.append(s("line", { x1: PAD.left, x2: PAD.left, y1: PAD.top, y2: H - PAD.bottom }));
  ticks(lo, hi, 4).forEach((t, i) => {
    const anchor = i === 0 ? "start" : i === 4 ? "end" : "middle";
    g.append(s("text", { x: x(t), y: H - PAD.bottom + 16, "text-anchor": anchor }, timeLabel(t, hi - lo)));
  });
  for (const [v, label] of yLabels) {
    g.append(s("text", { x: PAD.left - 6, y: y(v) + 4, "text-anchor": "end" }, label));
  }
  return g;
}

const ms = (v) => (v ? new Date(v).getTime() : null);

/** Equal steps for the distinct times in ``values`` (sorted): a picture of a few changes
 * stays readable whether they came a second or a year apart. */
function steps(values, a, b) {
  const distinct = [...new Set(values)].sort((p, q) => p - q);
  const step = (b - a) / Math.max(distinct.length - 1, 1);
  const at = new Map(distinct.map((v, i) => [v, a + i * step]));
  return { at: (v) => at.get(v), distinct };
}

function label(t, all) {
  return timeLabel(t, all.length > 1 ? all[all.length - 1] - all[0] : 0);
}

/** The history of a fact's lineage: each fact a box spanning the belief time it was believed
 * (across) and the valid time it was said to hold (up); events marked below the axis. Both
 * axes step from one time that matters to the next, each labelled. */
export function historyPicture(timeline, focus, onOpen) {
  const H = 400;
  const L = 110;
  const facts = timeline.facts;
  const NOW = Number.MAX_SAFE_INTEGER; // "now", the right end
  const xv = [...facts.flatMap((f) => [ms(f.recorded_at), ms(f.retired_at) ?? NOW]), ...timeline.events.map((e) => ms(e.at))];
  const x = steps(xv, L + 30, W - PAD.right - 30);
  const LOW = -Number.MAX_SAFE_INTEGER; // "not stated", the bottom
  const yv = [LOW, NOW, ...facts.flatMap((f) => [ms(f.valid_from) ?? LOW, ms(f.valid_to) ?? NOW])];
  const y = steps(yv, H - PAD.bottom, PAD.top);
  // A group, not an image: its boxes are links a screen reader announces.
  const svg = s("svg", { id: "history", viewBox: `0 0 ${W} ${H}`, role: "group", "aria-labelledby": "history-title history-desc", class: "chart" });
  const real = (list) => list.filter((v) => v !== NOW && v !== LOW);
  const g = s("g", { class: "axes", "aria-hidden": "true" },
    s("line", { x1: L, x2: W - PAD.right, y1: H - PAD.bottom, y2: H - PAD.bottom }),
    s("line", { x1: L, x2: L, y1: PAD.top, y2: H - PAD.bottom }));
  const xs = x.distinct;
  const every = Math.ceil(xs.length / 7);
  xs.forEach((t, i) => {
    if (i % every && i !== xs.length - 1) return;
    g.append(s("text", { x: x.at(t), y: H - PAD.bottom + 16, "text-anchor": "middle" }, t === NOW ? "now" : label(t, real(xs))));
  });
  for (const t of y.distinct) {
    const text = t === NOW ? "open" : t === LOW ? "not stated" : label(t, real(y.distinct));
    g.append(s("text", { x: L - 6, y: y.at(t) + 4, "text-anchor": "end" }, text));
  }
  svg.append(
    s("title", { id: "history-title" }, "The fact's history on both clocks"),
    s("desc", { id: "history-desc" }, `Across: when graphmem believed each fact (belief time). Up: when each was said to hold in the world (valid time). ${facts.length} facts, ${timeline.events.length} events; the list below tells the same.`),
    g,
    s("text", { class: "axis-title", x: (L + W - PAD.right) / 2, y: H - 8, "text-anchor": "middle" }, "belief time: when graphmem held it →"),
    s("text", { class: "axis-title", x: 14, y: (H - PAD.bottom) / 2, transform: `rotate(-90 14 ${(H - PAD.bottom) / 2})`, "text-anchor": "middle" }, "valid time: when it held →"),
  );
  const boxes = new Map();
  for (const f of facts) {
    const x0 = x.at(ms(f.recorded_at));
    const x1 = x.at(ms(f.retired_at) ?? NOW);
    const y0 = y.at(ms(f.valid_to) ?? NOW);
    const y1 = y.at(ms(f.valid_from) ?? LOW);
    boxes.set(f.id, { x0, x1, y0, y1 });
    const room = Math.max(4, Math.floor((x1 - x0 - 8) / 7));
    const name = f.text.length > room ? `${f.text.slice(0, room - 1)}…` : f.text;
    const node = s(
      "g",
      { class: `node status-${f.status}${f.id === focus ? " focus" : ""}`, "data-id": f.id, tabindex: "0", role: "link", "aria-label": `${f.status} fact: ${f.text}` },
      s("title", {}, `${f.text}\n${f.status}; believed ${when(f.recorded_at)} – ${f.retired_at ? when(f.retired_at) : "now"}; true ${f.valid_from ? when(f.valid_from) : "since ?"} – ${f.valid_to ? when(f.valid_to) : "open"}`),
      s("rect", { x: x0, y: y0, width: Math.max(x1 - x0, 3), height: Math.max(y1 - y0, 3), class: `${f.valid_from ? "" : "open-start "}${f.valid_to ? "" : "open-end"}` }),
      s("text", { x: x0 + 4, y: y0 + 15 }, name),
    );
    node.addEventListener("click", () => onOpen(f.id));
    node.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        onOpen(f.id);
      }
    });
    svg.append(node);
  }
  for (const e of timeline.events) {
    const at = x.at(ms(e.at));
    const a = boxes.get(e.fact_id);
    const b = e.other_id ? boxes.get(e.other_id) : null;
    if (a && b && ["superseded", "merged", "contradicted", "referenced"].includes(e.kind)) {
      svg.append(s("line", { class: `link link-${e.kind}`, x1: at, y1: (a.y0 + a.y1) / 2, x2: Math.max(b.x0, at) + 1, y2: (b.y0 + b.y1) / 2 + 10, "marker-end": "url(#arrow)" }, s("title", {}, e.words)));
    }
    svg.append(s("circle", { class: `event event-${e.kind}`, cx: at, cy: H - PAD.bottom + 32, r: 5 }, s("title", {}, `${when(e.at)}: ${e.words}`)));
  }
  svg.append(s("line", { class: "now", x1: x.at(NOW), x2: x.at(NOW), y1: PAD.top, y2: H - PAD.bottom }));
  svg.prepend(
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M 0 0 L 10 5 L 0 10 z" }))),
  );
  return svg;
}

/** The number of facts believed at each moment, from a diff over the namespace's life:
 * ``points`` are [time in ms, count] in order. ``onPick`` gets the time of a click. */
export function beliefChart(points, onPick) {
  const H = 260;
  const now = Date.now();
  const lo = points.length ? points[0][0] : now - 3600e3;
  const hi = Math.max(now, ...points.map((p) => p[0]));
  const top = Math.max(1, ...points.map((p) => p[1]));
  const x = scale(lo, hi, PAD.left, W - PAD.right);
  const y = scale(0, top, H - PAD.bottom, PAD.top);
  let d = `M ${x(lo)} ${y(0)}`;
  let last = 0;
  for (const [t, n] of points) {
    d += ` H ${x(t)} V ${y(n)}`;
    last = n;
  }
  d += ` H ${x(hi)}`;
  const svg = s("svg", { id: "belief-chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "belief-chart-title", class: "chart" });
  const step = Math.max(1, Math.ceil(top / 4));
  const yLabels = Array.from({ length: Math.floor(top / step) + 1 }, (_, i) => [i * step, String(i * step)]);
  svg.append(
    s("title", { id: "belief-chart-title" }, `Facts believed over time: ${last} now, at most ${top}. The table below the chart gives each change.`),
    axes(x, y, lo, hi, H, yLabels),
    s("text", { class: "axis-title", x: (PAD.left + W - PAD.right) / 2, y: H - 24, "text-anchor": "middle" }, "belief time →  (click to see what was believed then)"),
    s("path", { class: "series", d }),
  );
  svg.addEventListener("click", (event) => {
    const box = svg.getBoundingClientRect();
    const px = ((event.clientX - box.left) / box.width) * W;
    if (px < PAD.left || px > W - PAD.right) return;
    onPick(new Date(lo + ((px - PAD.left) / (W - PAD.right - PAD.left)) * (hi - lo)));
  });
  return svg;
}

/** The points of the believed count, [time in ms, count], from a diff: +1 as a fact became
 * believed, -1 as one was retired, or erased while still believed. */
export function beliefSteps(diff) {
  const changes = [
    ...diff.believed.map((c) => [ms(c.at), 1]),
    ...diff.retired.map((c) => [ms(c.at), -1]),
    // A fact erased while believed stops counting then (its recording is among ``believed``).
    ...diff.forgotten.filter((g) => g.kind === "fact" && !g.retired_at && ms(g.recorded_at) > ms(diff.since)).map((g) => [ms(g.erased_at), -1]),
  ].sort((a, b) => a[0] - b[0]);
  const points = [];
  let n = 0;
  for (const [t, step] of changes) {
    n += step;
    if (points.length && points[points.length - 1][0] === t) points[points.length - 1][1] = n;
    else points.push([t, n]);
  }
  // The count starts at nothing a second before the first change.
  return points.length ? [[points[0][0] - 1000, 0], ...points] : points;
}

/** A short table of the chart's points, for those who cannot see it. */
export function pointsTable(points) {
  return h(
    "details",
    { class: "chart-table" },
    h("summary", {}, "The chart as a table"),
    table(["From", "Facts believed"], points.map(([t, n]) => [when(new Date(t).toISOString()), String(n)])),
  );
}
