// The shell: sign-in with a key, the namespace picker, the navigation and the router. Routes
// live in the URL's fragment (#/search?ns=…&q=…) so a page can be bookmarked; the key never
// does.

import * as api from "./api.js";
import { h, none } from "./dom.js";
import * as audit from "./pages/audit.js";
import * as consolidation from "./pages/consolidation.js";
import * as erasure from "./pages/erasure.js";
import * as fact from "./pages/fact.js";
import * as namespaces from "./pages/namespaces.js";
import * as search from "./pages/search.js";

const PAGES = { namespaces, search, fact, audit, consolidation, erasure };
const NAV = [
  ["namespaces", "Namespaces"],
  ["search", "Search"],
  ["audit", "Audit"],
  ["consolidation", "Consolidation"],
  ["erasure", "Erasure"],
];

const main = document.getElementById("page");
const status = document.getElementById("status");
const picker = document.getElementById("ns");
let me = null; // the key as the server describes it
let known = []; // the namespaces the key opens that hold something
let rendering = 0;
let flash; // what to say once the next page is shown

/** Say something in the status line (read out by screen readers). */
export function say(text, kind = "info") {
  status.replaceChildren(text ? h("p", { class: kind }, text) : "");
}

function route() {
  const raw = location.hash.startsWith("#/") ? location.hash.slice(2) : "namespaces";
  const [name, query] = raw.split("?");
  return { name: Object.hasOwn(PAGES, name) ? name : "namespaces", params: new URLSearchParams(query || "") };
}

/** Go to a page: its name and parameters (the namespace kept unless given), and what to say
 * once it is shown (the outcome of the action that led there). */
export function go(name, params = {}, message = undefined) {
  flash = message;
  const query = new URLSearchParams({ ns: currentNs(), ...params });
  for (const [k, v] of [...query]) if (v === "" || v === undefined) query.delete(k);
  const target = `#/${name}?${query}`;
  if (location.hash === target) render();
  else location.hash = target;
}

function currentNs() {
  return route().params.get("ns") || picker.value || "";
}

function fillPicker(ns) {
  const names = known.map((n) => n.ns);
  if (ns && !names.includes(ns)) names.unshift(ns);
  for (const name of me.namespaces || []) if (!names.includes(name)) names.push(name);
  picker.replaceChildren(...names.map((n) => h("option", { value: n }, n)));
  if (names.length) picker.value = ns && names.includes(ns) ? ns : names[0];
}

function fillNav(current, ns) {
  const nav = document.getElementById("nav");
  const links = NAV.map(([name, label]) =>
    h(
      "li",
      {},
      h(
        "a",
        {
          href: `#/${name}${ns && name !== "namespaces" ? `?ns=${encodeURIComponent(ns)}` : ""}`,
          "aria-current": name === current ? "page" : null,
        },
        label,
      ),
    ),
  );
  nav.replaceChildren(h("ul", {}, links));
}

async function render(event) {
  const turn = ++rendering;
  if (!me) return showLogin();
  const { name, params } = route();
  const ns = params.get("ns") || picker.value || "";
  fillPicker(ns);
  fillNav(name, picker.value);
  main.setAttribute("aria-busy", "true");
  say(flash || "");
  flash = undefined;
  const page = PAGES[name];
  const ctx = {
    ns: picker.value,
    params,
    me,
    can: (op) => api.allowed(me.role, op),
    go,
    say,
    // What the person typed was refused: said, and shown where the page puts it.
    refused: (message) => {
      say(message, "error");
      return h("p", { class: "error refused" }, message);
    },
    stale: () => turn !== rendering,
  };
  try {
    const content = await page.render(ctx);
    if (turn !== rendering) return;
    main.replaceChildren(...[content].flat());
    document.title = `${page.title(ctx)} · graphmem`;
    // A page the person went to (not the first one): focus moves to it, and so its heading
    // is read out.
    if (event) main.focus();
  } catch (error) {
    if (turn !== rendering) return;
    if (error instanceof api.ApiError && error.status === 401) return signOut(error.message);
    main.replaceChildren(h("h1", {}, page.title(ctx)), none("This page could not be shown."));
    say(error.message, "error");
  } finally {
    if (turn === rendering) main.setAttribute("aria-busy", "false");
  }
}

function showLogin(message) {
  rendering++; // a page still loading is not shown over the form
  document.body.classList.remove("signed-in");
  document.title = "Sign in · graphmem";
  const input = h("input", {
    id: "key",
    name: "key",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    "aria-describedby": "key-hint",
  });
  const form = h(
    "form",
    { id: "login", onsubmit: (event) => signIn(event, input) },
    h("label", { for: "key" }, "API key"),
    input,
    h(
      "small",
      { id: "key-hint", class: "hint" },
      "A key made with graphmem keys create. This tab keeps it in its session storage until you " +
        "sign out or close the tab, and sends it only in the Authorization header.",
    ),
    h("button", { type: "submit" }, "Sign in"),
  );
  main.replaceChildren(h("h1", {}, "Sign in"), form);
  main.setAttribute("aria-busy", "false");
  if (message) say(message, "error");
  input.focus();
}

async function signIn(event, input) {
  event.preventDefault();
  const secret = input.value.trim();
  if (!secret) return;
  try {
    await start(secret);
    input.value = "";
    render();
  } catch (error) {
    say(error.message, "error");
  }
}

async function start(secret) {
  const key = await api.whoami(secret);
  const listed = await api.call("namespaces", {}, undefined, secret);
  api.storeKey(secret);
  [me, known] = [key, listed];
  document.getElementById("whoami").textContent = `${me.name} (${me.role})`;
  document.body.classList.add("signed-in");
}

function signOut(message) {
  api.storeKey(null);
  me = null;
  known = [];
  showLogin(message);
}

async function boot() {
  document.getElementById("signout").addEventListener("click", () => signOut());
  document.getElementById("skip").addEventListener("click", (event) => {
    event.preventDefault();
    main.focus();
  });
  picker.addEventListener("change", () => go(route().name === "fact" ? "search" : route().name, { ns: picker.value }));
  window.addEventListener("hashchange", render);
  try {
    await api.loadTable();
    const secret = api.storedKey();
    if (secret) await start(secret);
  } catch (error) {
    // Only a refused key is forgotten: an outage (503) or a lost network keeps it for a reload.
    if (error instanceof api.ApiError && error.status === 401) api.storeKey(null);
    else say(error.message, "error");
  }
  render();
}

boot();
