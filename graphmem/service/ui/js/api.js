// The REST API as the pages call it: each call names an operation of graphmem's operation
// table (served at operations.json) and the table gives its method, path and role. The key is
// sent as a bearer header only; it lives in this tab's session storage, never in a URL.

const STORE = "graphmem.key";
const RANK = { read: 1, write: 2, admin: 3 };
// The service's root: the UI is served at <root>/ui/.
const ROOT = new URL("..", document.baseURI);

let table = new Map();
let bookmark = null;

/** An error answer of the API: its status, graphmem's error type and message. */
export class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

/** Read the operation table once. */
export async function loadTable() {
  const answer = await fetch(new URL("operations.json", document.baseURI));
  if (!answer.ok) throw new ApiError(answer.status, "ServiceError", "the UI's operation table did not load");
  table = new Map((await answer.json()).map((op) => [op.name, op]));
}

/** The operation of a name (throws on a name the table does not have). */
export function operation(name) {
  const op = table.get(name);
  if (!op) throw new Error(`no operation ${name} in the table`);
  return op;
}

export function storedKey() {
  return sessionStorage.getItem(STORE);
}

export function storeKey(secret) {
  if (secret) sessionStorage.setItem(STORE, secret);
  else {
    sessionStorage.removeItem(STORE);
    bookmark = null; // the next key starts afresh
  }
}

/** Whether a key of ``role`` may call the operation ``name``. */
export function allowed(role, name) {
  const need = operation(name).role;
  return need === null || (RANK[role] || 0) >= RANK[need];
}

function url(op, params, query) {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name) => {
    if (params[name] === undefined) throw new Error(`${op.name} needs ${name}`);
    return encodeURIComponent(params[name]);
  });
  const target = new URL(path.replace(/^\//, ""), ROOT);
  for (const [name, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) target.searchParams.append(name, one);
  }
  return target;
}

async function send(target, init, secret) {
  const headers = { Accept: "application/json", Authorization: `Bearer ${secret}` };
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  if (bookmark) headers["Graphmem-Bookmark"] = bookmark;
  let answer;
  try {
    answer = await fetch(target, { ...init, headers, cache: "no-store", credentials: "omit" });
  } catch (error) {
    throw new ApiError(0, "NetworkError", `the server did not answer: ${error.message}`);
  }
  const mark = answer.headers.get("Graphmem-Bookmark");
  if (mark) bookmark = mark;
  const body = await answer.json().catch(() => null);
  if (!answer.ok) {
    const error = (body && body.error) || {};
    throw new ApiError(
      answer.status,
      error.type || "ServiceError",
      error.message || `${answer.status} ${answer.statusText}`,
    );
  }
  return body;
}

/** Call the operation ``name``: path parameters, then the JSON body of a POST or the query of a
 * GET. */
export async function call(name, params = {}, payload = undefined, secret = storedKey()) {
  const op = operation(name);
  if (op.http === "GET") return send(url(op, params, payload), { method: "GET" }, secret);
  return send(url(op, params), { method: "POST", body: JSON.stringify(payload || {}) }, secret);
}

/** The answer of a call as ``{ok}``, or ``{refused: message}`` when the server refused what
 * the person typed (422: a time, a filter), for the page to show beside the form that sent it;
 * any other failure is thrown. */
export async function attempt(promise) {
  try {
    return { ok: await promise };
  } catch (error) {
    if (error instanceof ApiError && error.status === 422) return { refused: error.message };
    throw error;
  }
}

/** The key this tab holds, as the server describes it (GET /v1/key; not an operation of the
 * table, since it belongs to no namespace). */
export async function whoami(secret = storedKey()) {
  return send(new URL("v1/key", ROOT), { method: "GET" }, secret);
}
