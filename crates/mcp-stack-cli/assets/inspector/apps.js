// MCP Apps, rendered as a web host does (SEP-1865): the view's HTML goes to a sandbox proxy on
// another site (`[::1]:SANDBOX`; `127.0.0.1:SANDBOX` without IPv6 loopback), served with the CSP built from `_meta.ui.csp`; the proxy
// loads it into an inner sandboxed frame and relays JSON-RPC over postMessage. This page is the
// host: it answers `ui/initialize`, sends the tool input and result, forwards the view's
// `tools/call` and `resources/read` to the server (marked as the view's: the inspector lets a
// view reach its own upstream only, behind a gateway), asks the user before opening a link the
// view asks for, resizes the frame, and tears it down.
"use strict";

(function () {
  const h = MI.h;
  const HOST_INFO = { name: "mcp-inspector", version: "1" };
  const APP_PROTOCOL = "2026-01-26";
  const MAX_PER_SECOND = 200; // messages from one view; the rest are dropped (and counted)
  const TEARDOWN_WAIT = 3000;
  const MAX_HEIGHT = 1600;

  MI.sandboxOrigin = null; // learnt from the page's CSP-free config below

  // The sandbox's origin: the page is served from 127.0.0.1:P; the server tells the sandbox's
  // origin (`http://[::1]:Q`, the literal it bound) in the status (`sandbox`). Frames are
  // loaded from it and messages posted to it only.
  function sandboxUrl(csp) {
    const q = new URLSearchParams({ host: location.origin, csp: JSON.stringify(csp || {}) });
    return MI.status.sandbox + "/sandbox?" + q.toString();
  }

  function appTool(name) {
    const t = (MI.tools || []).find((x) => x.name === name);
    if (!t) return null;
    const ui = (t._meta && t._meta.ui) || {};
    const vis = Array.isArray(ui.visibility) ? ui.visibility : ["model", "app"];
    return vis.includes("app") ? t : null;
  }

  // Renders the view `uri` for a call of `tool` with `args` into `container`; `result` is a
  // promise of the call's answer (`{result}` or `{error}`).
  MI.renderApp = async function (container, tool, uri, args, result) {
    const frameBox = h("div", { class: "app-frame" });
    const status = h("span", { class: "muted" }, "loading " + uri);
    const close = h("button", { type: "button", class: "app-close" }, "Close view");
    const log = h("ol", { class: "app-log" });
    frameBox.append(h("div", { class: "app-bar" }, h("strong", {}, "App"), h("code", {}, uri), status, close));
    container.append(frameBox);
    const note = (text) => {
      log.append(h("li", {}, new Date().toISOString().slice(11, 23) + " " + text));
      while (log.childNodes.length > 200) log.firstChild.remove();
    };
    const read = await MI.api("read", { uri });
    if (read.error) { status.textContent = "cannot read the view"; frameBox.append(MI.errorBox(read.error)); return; }
    const contents = (read.result.contents || [])[0] || {};
    let html = contents.text;
    if (typeof html !== "string" && typeof contents.blob === "string") {
      try { html = new TextDecoder().decode(Uint8Array.from(atob(contents.blob), (c) => c.charCodeAt(0))); } catch (e) { html = null; }
    }
    if (typeof html !== "string") { status.textContent = "the view has no HTML"; return; }
    const ui = (contents._meta && contents._meta.ui) || {};
    if (ui.prefersBorder === false) frameBox.classList.add("bare");
    const iframe = document.createElement("iframe");
    iframe.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    iframe.setAttribute("title", "MCP App view " + uri);
    iframe.className = "app";
    iframe.src = sandboxUrl(ui.csp);
    frameBox.append(iframe, log);

    const origin = new URL(MI.status.sandbox).origin;
    let initialized = false, closed = false, nextId = 1, dropped = 0, windowStart = 0, inWindow = 0;
    const pending = new Map();
    // Whose requests the bridge forwards: the inspector checks them against the view's upstream.
    const view = { tool: String(tool.name), uri };
    let linkAsked = null; // the link waiting for the user's answer (one at a time)
    const post = (msg) => { if (!closed && iframe.contentWindow) iframe.contentWindow.postMessage(Object.assign({ jsonrpc: "2.0" }, msg), origin); };
    const reply = (id, res) => post(res.error ? { id, error: res.error } : { id, result: res.result === undefined ? {} : res.result });
    const request = (method, params) => new Promise((resolve) => {
      const id = "host-" + nextId++;
      pending.set(id, resolve);
      post({ id, method, params });
    });
    let answer = null;
    result.then((r) => { answer = r; if (initialized) sendResult(); });
    const sendResult = () => {
      if (!answer || closed) return;
      if (answer.error) post({ method: "ui/notifications/tool-cancelled", params: { reason: String(answer.error.message) } });
      else post({ method: "ui/notifications/tool-result", params: answer.result });
    };

    // Shows the whole URL the view asks to open, with Open and Don't open; true once opened.
    function askToOpen(href) {
      return new Promise((resolve) => {
        const open = h("button", { type: "button", class: "link-open" }, "Open");
        const no = h("button", { type: "button", class: "link-cancel" }, "Don't open");
        const card = h("div", { class: "block link-ask" }, h("strong", {}, "The view asks to open this link:"),
          h("pre", { class: "link-url" }, href), h("div", { class: "row" }, open, no));
        linkAsked = (answer) => { linkAsked = null; card.remove(); resolve(answer); };
        open.addEventListener("click", () => linkAsked && linkAsked(true));
        no.addEventListener("click", () => linkAsked && linkAsked(false));
        iframe.before(card);
      });
    }

    async function onRequest(m) {
      const p = m.params || {};
      switch (m.method) {
        case "ui/initialize":
          note("ui/initialize from " + JSON.stringify(p.appInfo || {}));
          return { result: {
            protocolVersion: APP_PROTOCOL, hostInfo: HOST_INFO,
            hostCapabilities: { serverTools: {}, serverResources: {}, logging: {}, openLinks: {} },
            hostContext: {
              toolInfo: { tool }, theme: document.documentElement.classList.contains("dark") ? "dark" : "light",
              displayMode: "inline", availableDisplayModes: ["inline"], platform: "web",
              containerDimensions: { maxHeight: MAX_HEIGHT }, locale: navigator.language,
              timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone, userAgent: "mcp-inspector",
            },
          } };
        case "tools/call": {
          const name = String(p.name || "");
          if (!appTool(name)) return { error: { code: -32602, message: "the view may not call " + name } };
          note("tools/call " + name);
          const r = await MI.api("call", { name, arguments: p.arguments || {}, view });
          return r.error ? { error: { code: r.error.code || -32603, message: String(r.error.message) } } : { result: r.result };
        }
        case "resources/read": {
          const r = await MI.api("read", { uri: String(p.uri || ""), view });
          return r.error ? { error: { code: r.error.code || -32603, message: String(r.error.message) } } : { result: r.result };
        }
        case "ui/open-link": {
          let u = null;
          try { u = new URL(String(p.url)); } catch (e) { /* below */ }
          if (!u || (u.protocol !== "https:" && u.protocol !== "http:")) {
            return { error: { code: -32602, message: "only http and https links are opened" } };
          }
          if (linkAsked) return { error: { code: -32000, message: "another link is waiting for the user" } };
          note("open-link asked: " + u.href);
          const yes = await askToOpen(u.href);
          if (!yes) return { error: { code: -32000, message: "the user did not open the link" } };
          note("open-link " + u.href);
          window.open(u.href, "_blank", "noopener,noreferrer");
          return { result: {} };
        }
        case "ui/message": note("message: " + JSON.stringify(p).slice(0, 500)); return { result: {} };
        case "ui/update-model-context": note("model context: " + JSON.stringify(p).slice(0, 500)); return { result: {} };
        case "ui/request-display-mode": return { result: { mode: "inline" } };
        case "ping": return { result: {} };
        default: return { error: { code: -32601, message: "Method not found: " + String(m.method) } };
      }
    }

    function onNotification(m) {
      const p = m.params || {};
      switch (m.method) {
        case "ui/notifications/sandbox-proxy-ready":
          post({ method: "ui/notifications/sandbox-resource-ready", params: { html, csp: ui.csp, permissions: ui.permissions } });
          status.textContent = "starting";
          break;
        case "ui/notifications/initialized":
          if (initialized) break;
          initialized = true;
          status.textContent = "running";
          post({ method: "ui/notifications/tool-input", params: { arguments: args } });
          sendResult();
          break;
        case "ui/notifications/size-changed": {
          const height = Number(p.height);
          if (Number.isFinite(height) && height > 0) iframe.style.height = Math.min(Math.ceil(height) + 4, MAX_HEIGHT) + "px";
          break;
        }
        case "notifications/message": note("log " + String(p.level) + ": " + JSON.stringify(p.data).slice(0, 500)); break;
        default: note("notification " + String(m.method));
      }
    }

    const listener = async (event) => {
      if (event.source !== iframe.contentWindow || event.origin !== origin) return;
      const now = Date.now();
      if (now - windowStart > 1000) { windowStart = now; inWindow = 0; }
      if (++inWindow > MAX_PER_SECOND) {
        if (++dropped % 1000 === 1) { status.textContent = "flooding: " + dropped + " messages dropped"; }
        return;
      }
      const m = event.data;
      if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
      if (m.method === undefined && m.id !== undefined) {
        const done = pending.get(m.id);
        if (done) { pending.delete(m.id); done(m); }
        return;
      }
      if (typeof m.method !== "string") return;
      if (m.id !== undefined) {
        if (!initialized && m.method !== "ui/initialize" && m.method !== "ping") {
          return reply(m.id, { error: { code: -32600, message: "not initialized" } });
        }
        reply(m.id, await onRequest(m));
      } else onNotification(m);
    };
    window.addEventListener("message", listener);

    const teardown = async (reason) => {
      if (closed) return;
      status.textContent = "tearing down";
      if (initialized) {
        await Promise.race([request("ui/resource-teardown", { reason }), new Promise((r) => setTimeout(r, TEARDOWN_WAIT))]);
      }
      closed = true;
      if (linkAsked) linkAsked(false);
      window.removeEventListener("message", listener);
      pending.clear();
      iframe.remove();
      status.textContent = "closed";
      close.disabled = true;
    };
    close.addEventListener("click", () => teardown("closed by the user"));
    MI.openApps = (MI.openApps || []).filter((a) => a.isConnected !== false);
    MI.openApps.push({ teardown, frameBox });
  };

  // Closes every open view (before a new call's view replaces them).
  MI.closeApps = async function () {
    const apps = MI.openApps || [];
    MI.openApps = [];
    await Promise.all(apps.map((a) => a.teardown("replaced")));
  };
})();
