// The MCP inspector page: core (the API, the event stream, DOM helpers, result rendering, the
// server pane, traffic and questions). Nothing the server sends is ever parsed as markup: every
// value reaches the page through text nodes and checked attributes (see `h`).
"use strict";

const MI = (window.MI = {});

// --- The token: from the URL fragment (then removed from the address bar), kept for reloads in
// this tab's session storage (readable by this origin only; the views run on another origin).
// A browser `mcp inspect` opened gets a one-time code instead (`#code=`), exchanged once for
// the token, so the token is never on the browser's command line.
(function () {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromHash = fragment.get("token");
  MI.code = fragment.get("code");
  if (fromHash || MI.code) history.replaceState(null, "", location.pathname);
  if (fromHash) sessionStorage.setItem("mcp-inspector-token", fromHash);
  MI.token = sessionStorage.getItem("mcp-inspector-token") || "";
})();
MI.exchange = async function () {
  const code = MI.code;
  MI.code = null;
  if (!code) return null;
  const r = await fetch("/api/exchange", {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code }),
  });
  if (!r.ok) return "HTTP " + r.status + ": " + (await r.text());
  const token = (await r.json()).token;
  if (typeof token !== "string") return "no token in the answer";
  sessionStorage.setItem("mcp-inspector-token", token);
  MI.token = token;
  return null;
};

// --- DOM: `h("div", {class: "x"}, "text", child)`; strings become text nodes. Only the
// attributes below are set, and never an event handler or a URL from the server.
const SAFE_ATTRS = new Set(["class", "id", "type", "value", "placeholder", "title", "name", "min", "max", "step",
  "rows", "size", "checked", "disabled", "hidden", "for", "list", "colspan", "data-tab", "controls", "download"]);
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (!SAFE_ATTRS.has(k)) throw new Error("attribute not allowed: " + k);
    if (k === "checked" || k === "disabled" || k === "hidden") el[k] = Boolean(v);
    else if (k === "value") el.value = String(v);
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
MI.h = h;
MI.$ = (id) => document.getElementById(id);
MI.clear = (el) => { while (el.firstChild) el.firstChild.remove(); return el; };

// --- The API: POST /api/NAME with the token; `{result, ms}` or `{error}`.
MI.api = async function (name, body) {
  const r = await fetch("/api/" + name, {
    method: "POST",
    headers: { "content-type": "application/json", "x-inspector-token": MI.token },
    body: JSON.stringify(body || {}),
  });
  if (!r.ok) return { error: { message: "HTTP " + r.status + ": " + (await r.text()) } };
  return r.json();
};

// --- Events: a fetch stream of server-sent events (EventSource cannot send the token header).
const handlers = {};
MI.on = (type, f) => { (handlers[type] = handlers[type] || []).push(f); };
function dispatch(ev) {
  for (const f of handlers[ev.type] || []) {
    try { f(ev); } catch (e) { console.error(e); }
  }
}
async function events() {
  for (;;) {
    try {
      const r = await fetch("/api/events", { headers: { "x-inspector-token": MI.token } });
      if (!r.ok) { setConn(false, "events: HTTP " + r.status); return; }
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          for (const line of frame.split("\n")) {
            if (line.startsWith("data: ")) {
              try { dispatch(JSON.parse(line.slice(6))); } catch (e) { console.error(e); }
            }
          }
        }
      }
    } catch (e) { console.error(e); }
    await new Promise((res) => setTimeout(res, 1000));
  }
}

// --- Text that may be huge: shown cut, with the whole downloadable.
const SHOWN = 20000;
MI.longText = function (text, name) {
  const s = String(text);
  if (s.length <= SHOWN) return h("pre", {}, s);
  const wrap = h("div", {});
  wrap.append(h("pre", {}, s.slice(0, SHOWN)));
  const note = h("div", { class: "row muted" }, "shown: " + SHOWN + " of " + s.length + " characters ");
  const save = h("button", { type: "button" }, "Download all");
  save.addEventListener("click", () => MI.download(s, name || "result.txt"));
  note.append(save);
  wrap.append(note);
  return wrap;
};
MI.download = function (text, name) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  const a = h("a", { download: name });
  a.href = url;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
};
MI.json = (v, name) => MI.longText(JSON.stringify(v, null, 2), name || "result.json");

// --- Content blocks and results.
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;
function dataUrl(mime, data, kind) {
  if (typeof mime !== "string" || !mime.startsWith(kind + "/") || !/^[\w.+-]+\/[\w.+-]+$/.test(mime)) return null;
  if (typeof data !== "string" || !BASE64.test(data)) return null;
  return "data:" + mime + ";base64," + data.replace(/\s/g, "");
}
MI.block = function (b) {
  const box = h("div", { class: "block" }, h("div", { class: "kind" }, String(b && b.type)));
  if (!b || typeof b !== "object") return box.append(MI.json(b)), box;
  switch (b.type) {
    case "text": box.append(MI.longText(b.text)); break;
    case "image":
    case "audio": {
      const src = dataUrl(b.mimeType, b.data, b.type);
      if (!src) { box.append(h("div", { class: "error" }, "unusable " + b.type + " (" + String(b.mimeType) + ")")); break; }
      const media = h(b.type === "image" ? "img" : "audio", b.type === "audio" ? { controls: "" } : {});
      media.src = src;
      if (b.type === "image") media.style.maxWidth = "100%";
      box.append(media);
      break;
    }
    case "resource_link": {
      box.append(h("div", {}, String(b.name || ""), " ", h("code", {}, String(b.uri))));
      const read = h("button", { type: "button" }, "Read");
      read.addEventListener("click", () => MI.readResource && MI.readResource(String(b.uri)));
      box.append(read);
      break;
    }
    case "resource": {
      const r = b.resource || {};
      box.append(h("div", {}, h("code", {}, String(r.uri)), " ", h("span", { class: "muted" }, String(r.mimeType || ""))));
      if (typeof r.text === "string") box.append(MI.longText(r.text));
      else if (typeof r.blob === "string") box.append(h("div", { class: "muted" }, "binary, " + r.blob.length + " base64 characters"));
      break;
    }
    default: box.append(MI.json(b));
  }
  return box;
};
MI.toolResult = function (r, check) {
  const out = h("div", {});
  if (r.isError) out.append(h("div", { class: "error" }, "isError: the tool reports a failure"));
  for (const b of Array.isArray(r.content) ? r.content : []) out.append(MI.block(b));
  if (r.structuredContent !== undefined) {
    out.append(h("div", { class: "kind" }, "structuredContent"));
    out.append(MI.json(r.structuredContent));
  }
  if (check) {
    out.append(check.valid ? h("div", { class: "ok" }, "structuredContent matches the outputSchema")
      : h("div", { class: "error" }, "structuredContent does not match the outputSchema: " + check.errors.join("; ")));
  }
  const raw = h("details", {}, h("summary", {}, "raw result"), MI.json(r));
  out.append(raw);
  return out;
};
MI.errorBox = (e) => h("div", { class: "error" },
  (e && e.code !== undefined ? "error " + e.code + ": " : "error: ") + String(e && e.message),
  e && e.data ? MI.json(e.data) : null);

// --- Connection, server pane.
function setConn(ok, text) {
  const c = MI.$("conn");
  c.textContent = text;
  c.className = "badge " + (ok ? "ok" : "bad");
}
MI.status = null;
MI.refresh = async function (fresh) {
  setConn(false, fresh ? "reconnecting" : "connecting");
  const s = await MI.api(fresh ? "connect" : "status");
  const pane = MI.clear(MI.$("tab-server"));
  if (s.error) {
    setConn(false, "not connected");
    pane.append(MI.errorBox(s.error));
    return;
  }
  const st = (MI.status = s.result);
  setConn(true, "connected");
  MI.$("target").textContent = st.target;
  MI.$("era").textContent = st.era + " " + st.protocolVersion;
  const hs = st.handshake || {};
  const info = (hs._meta && hs._meta["io.modelcontextprotocol/serverInfo"]) || hs.serverInfo || {};
  pane.append(h("h2", {}, String(info.title || info.name || "server"), " ", h("span", { class: "muted" }, String(info.version || ""))));
  if (hs.instructions) pane.append(h("h3", {}, "Instructions"), MI.longText(hs.instructions));
  pane.append(h("h3", {}, "Capabilities"), MI.json(st.capabilities));
  pane.append(h("h3", {}, st.era === "modern" ? "server/discover" : "initialize"), MI.json(hs));
  for (const f of MI.onConnect) f();
};
MI.onConnect = [];

// --- Questions from the server (elicitation, sampling), answered in the page.
MI.on("question", (q) => {
  const box = MI.$("questions");
  box.hidden = false;
  const card = h("div", { class: "block" });
  const answer = async (result, error) => {
    const r = await MI.api("answer", error ? { id: q.id, error } : { id: q.id, result });
    card.remove();
    if (!box.firstChild) box.hidden = true;
    if (r.error) alert(r.error.message);
  };
  const p = q.params || {};
  if (q.method === "elicitation/create" && p.mode === "url") {
    card.append(h("strong", {}, "The server asks you to open a URL"), h("p", {}, String(p.message || "")),
      h("code", {}, String(p.url || "")));
    const open = h("button", { type: "button" }, "Open and accept");
    open.addEventListener("click", () => {
      try { const u = new URL(p.url); if (u.protocol === "https:" || u.protocol === "http:") window.open(u.href, "_blank", "noopener,noreferrer"); } catch (e) { /* not a URL */ }
      answer({ action: "accept" });
    });
    const decline = h("button", { type: "button" }, "Decline");
    decline.addEventListener("click", () => answer({ action: "decline" }));
    card.append(h("div", { class: "row" }, open, decline));
  } else if (q.method === "elicitation/create") {
    card.append(h("strong", {}, "The server asks"), h("p", {}, String(p.message || "")));
    const form = MI.form(p.requestedSchema || { type: "object", properties: {} });
    card.append(form.el);
    const send = h("button", { type: "button", class: "q-accept" }, "Accept");
    send.addEventListener("click", () => {
      try { answer({ action: "accept", content: form.value() }); } catch (e) { alert(e.message); }
    });
    const decline = h("button", { type: "button" }, "Decline");
    decline.addEventListener("click", () => answer({ action: "decline" }));
    const cancel = h("button", { type: "button" }, "Cancel");
    cancel.addEventListener("click", () => answer({ action: "cancel" }));
    card.append(h("div", { class: "row" }, send, decline, cancel));
  } else if (q.method === "sampling/createMessage") {
    card.append(h("strong", {}, "The server asks for a model response (sampling)"), MI.json(p.messages || p));
    const text = h("textarea", { class: "json q-text", rows: 3, placeholder: "the assistant's reply" });
    const send = h("button", { type: "button", class: "q-reply" }, "Reply");
    send.addEventListener("click", () => answer({ role: "assistant", content: { type: "text", text: text.value },
      model: "mcp-inspector (you)", stopReason: "endTurn" }));
    const refuse = h("button", { type: "button" }, "Refuse");
    refuse.addEventListener("click", () => answer(null, "the user refused the sampling request"));
    card.append(text, h("div", { class: "row" }, send, refuse));
  } else {
    card.append(MI.json(q));
  }
  box.append(card);
});

// --- Traffic: every message of the client, with request-to-response timings.
const MAX_ROWS = 2000;
const sentAt = new Map();
let rows = 0;
MI.on("traffic", (t) => {
  let m = null;
  try { m = JSON.parse(t.text); } catch (e) { /* cut: shown raw */ }
  const body = document.querySelector("#traffic tbody");
  const id = m && m.id !== undefined ? JSON.stringify(m.id) : "";
  let what = m ? (m.method || (m.error ? "error " + m.error.code : "result")) : "(cut)";
  let took = "";
  if (m && m.method && m.id !== undefined && t.dir === "sent") sentAt.set(id, t.at);
  if (m && !m.method && m.id !== undefined && sentAt.has(id)) {
    took = (t.at - sentAt.get(id)).toFixed(1);
    sentAt.delete(id);
  }
  if (m && m.result && m.result.resultType === "input_required") what = "input_required";
  const row = h("tr", { class: "msg" }, h("td", {}, t.at.toFixed(1)), h("td", {}, t.dir === "sent" ? "→" : "←"),
    h("td", {}, id), h("td", {}, what), h("td", {}, String(t.size)), h("td", {}, took));
  row.addEventListener("click", () => {
    const next = row.nextSibling;
    if (next && next.classList.contains("raw")) { next.remove(); return; }
    const shown = m ? MI.json(m, "message.json") : MI.longText(t.text);
    row.after(h("tr", { class: "raw" }, h("td", { colspan: 6 }, shown)));
  });
  body.append(row);
  if (++rows > MAX_ROWS) { body.firstChild.remove(); rows--; }
  if (sentAt.size > 10000) sentAt.clear();
  MI.$("t-count").textContent = rows + " messages";
});
// --- OAuth login (HTTP servers): the authorization page opens in a new tab; the tokens are
// stored where `mcp auth` keeps them and the inspector connects again.
MI.on("login", (e) => {
  const box = MI.$("questions");
  let card = document.getElementById("login-card");
  if (!card) {
    card = h("div", { class: "block", id: "login-card" });
    box.append(card);
  }
  box.hidden = false;
  MI.clear(card);
  if (e.authorize) {
    let u = null;
    try { u = new URL(String(e.authorize)); } catch (err) { /* below */ }
    if (!u || (u.protocol !== "https:" && u.protocol !== "http:")) {
      card.append(h("div", { class: "error" }, "the authorization server gave an unusable URL"));
      return;
    }
    const link = h("a", { class: "authorize" }, "Open the authorization page");
    link.href = u.href;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    card.append(h("strong", {}, "Log in: "), link, h("div", { class: "muted" }, u.origin));
  } else if (e.error) {
    card.append(h("div", { class: "error" }, "login failed: " + String(e.error)));
  } else if (e.done) {
    card.remove();
    if (!box.firstChild) box.hidden = true;
  }
});
// A page that read too slowly: the inspector dropped the oldest events queued for it.
let droppedEvents = 0;
MI.on("dropped", (e) => {
  droppedEvents += Number(e.count) || 0;
  const badge = MI.$("dropped");
  badge.hidden = false;
  badge.textContent = droppedEvents + " events dropped";
  badge.title = "this page read too slowly: the inspector dropped the oldest events queued for it";
});
MI.on("status", (s) => {
  if (!s.connected) setConn(false, "not connected: " + String(s.error || ""));
  else if (!MI.status || s.generation > MI.status.generation) MI.refresh(false);
});

document.addEventListener("DOMContentLoaded", async () => {
  const refused = await MI.exchange();
  if (!MI.token) {
    MI.clear(MI.$("tab-server")).append(h("p", { class: "error" }, "No token: open the URL `mcp inspect` printed.",
      refused ? " (the one-time code was refused: " + refused + ")" : ""));
    return;
  }
  MI.$("t-clear").addEventListener("click", () => { MI.clear(document.querySelector("#traffic tbody")); rows = 0; });
  MI.$("reconnect").addEventListener("click", () => MI.refresh(true));
  MI.$("login").addEventListener("click", async () => {
    const r = await MI.api("login", {});
    if (r.error) alert(r.error.message);
  });
  MI.$("dark").addEventListener("change", (e) => document.documentElement.classList.toggle("dark", e.target.checked));
  for (const b of document.querySelectorAll("nav#tabs button")) {
    b.addEventListener("click", () => MI.show(b.getAttribute("data-tab")));
  }
  events();
  MI.refresh(false);
});
MI.show = function (tab) {
  for (const b of document.querySelectorAll("nav#tabs button")) b.classList.toggle("on", b.getAttribute("data-tab") === tab);
  for (const s of document.querySelectorAll("section.tab")) s.classList.toggle("on", s.id === "tab-" + tab);
  if (MI.onShow[tab]) MI.onShow[tab]();
};
MI.onShow = {};
