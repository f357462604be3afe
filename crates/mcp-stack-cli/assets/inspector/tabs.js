// The panes: tools (forms, results, MCP Apps), resources and templates (with completion),
// prompts, tasks, skills and the listen stream.
"use strict";

(function () {
  const h = MI.h, $ = MI.$;

  function listPane(listEl, items, label, sub, onPick) {
    MI.clear(listEl);
    if (!items.length) listEl.append(h("li", { class: "muted" }, "(none)"));
    for (const it of items) {
      const li = h("li", {}, label(it), h("span", { class: "sub" }, sub(it) || ""));
      li.addEventListener("click", () => {
        for (const x of listEl.children) x.classList.remove("on");
        li.classList.add("on");
        onPick(it);
      });
      listEl.append(li);
    }
  }

  // --- Tools.
  async function loadTools() {
    const r = await MI.api("list", { kind: "tools" });
    if (r.error) { MI.clear($("tool-detail")).append(MI.errorBox(r.error)); return; }
    MI.tools = r.result;
    listPane($("tool-list"), MI.tools, (t) => String(t.name), (t) => t.title || t.description, showTool);
  }
  function showTool(t) {
    const pane = MI.clear($("tool-detail"));
    const ui = (t._meta && t._meta.ui) || null;
    pane.append(h("h2", {}, String(t.title || t.name), " ", h("code", {}, String(t.name))));
    if (t.description) pane.append(h("p", {}, String(t.description)));
    if (ui) pane.append(h("p", { class: "muted" }, "MCP App view: " + String(ui.resourceUri || "") +
      (Array.isArray(ui.visibility) ? " (visibility: " + ui.visibility.join(", ") + ")" : "")));
    if (t.annotations) pane.append(h("details", {}, h("summary", {}, "annotations"), MI.json(t.annotations)));
    const form = MI.form(t.inputSchema);
    pane.append(form.el);
    const call = h("button", { type: "button", class: "call" }, "Call");
    const out = h("div", { class: "result" });
    pane.append(h("div", { class: "row" }, call), out);
    call.addEventListener("click", async () => {
      let args;
      try { args = form.value(); } catch (e) { MI.clear(out).append(h("div", { class: "error" }, e.message)); return; }
      MI.clear(out).append(h("div", { class: "muted" }, "calling…"));
      await MI.closeApps();
      const pending = MI.api("call", { name: t.name, arguments: args });
      if (ui && ui.resourceUri) MI.renderApp(out, t, String(ui.resourceUri), args, pending);
      const r = await pending;
      out.firstChild && out.firstChild.classList && out.firstChild.classList.contains("muted") && out.firstChild.remove();
      if (r.error) { out.append(MI.errorBox(r.error)); return; }
      if (r.result.task) {
        out.append(h("div", {}, "started task ", h("code", {}, String(r.result.task.taskId)), " (see Tasks)"));
        MI.trackTask(r.result.task.taskId, t.name);
        return;
      }
      out.append(h("div", { class: "muted" }, "answered in " + r.ms.toFixed(1) + " ms"), MI.toolResult(r.result, r.outputCheck));
    });
  }

  // --- Resources and templates.
  MI.readResource = async function (uri, into) {
    MI.show("resources");
    const pane = into || MI.clear($("resource-detail"));
    pane.append(h("h3", {}, h("code", {}, uri)));
    const r = await MI.api("read", { uri });
    if (r.error) { pane.append(MI.errorBox(r.error)); return; }
    for (const c of r.result.contents || []) {
      pane.append(h("div", { class: "muted" }, String(c.mimeType || "")));
      if (typeof c.text === "string") pane.append(MI.longText(c.text, "resource.txt"));
      else if (typeof c.blob === "string") {
        const save = h("button", { type: "button" }, "Download (" + c.blob.length + " base64 characters)");
        save.addEventListener("click", () => MI.download(c.blob, "resource.base64"));
        pane.append(save);
      }
    }
    pane.append(h("details", {}, h("summary", {}, "raw result"), MI.json(r.result)));
  };
  async function loadResources() {
    const [res, tpl] = await Promise.all([MI.api("list", { kind: "resources" }), MI.api("list", { kind: "templates" })]);
    const items = [];
    for (const r of res.result || []) items.push({ kind: "resource", it: r });
    for (const t of tpl.result || []) items.push({ kind: "template", it: t });
    listPane($("resource-list"), items, (x) => String(x.it.name || x.it.uri || x.it.uriTemplate),
      (x) => x.kind === "template" ? "template " + x.it.uriTemplate : x.it.uri, (x) => {
        if (x.kind === "resource") return MI.readResource(String(x.it.uri));
        showTemplate(x.it);
      });
    if (res.error) $("resource-detail").append(MI.errorBox(res.error));
  }
  function showTemplate(t) {
    const pane = MI.clear($("resource-detail"));
    const tmpl = String(t.uriTemplate);
    pane.append(h("h2", {}, String(t.name)), h("code", {}, tmpl));
    const names = [...tmpl.matchAll(/\{[+#./;?&]?([A-Za-z0-9_]+)\*?\}/g)].map((m) => m[1]);
    const inputs = {};
    for (const n of names) {
      const listId = "complete-" + n;
      const input = h("input", { type: "text", name: n, list: listId });
      const options = h("datalist", { id: listId });
      let timer = null;
      input.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(async () => {
          const context = { arguments: Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v.value])) };
          const r = await MI.api("complete", { ref: { type: "ref/resource", uri: tmpl }, argument: { name: n, value: input.value }, context });
          MI.clear(options);
          for (const v of (r.result && r.result.completion && r.result.completion.values) || []) options.append(h("option", { value: String(v) }));
        }, 200);
      });
      inputs[n] = input;
      pane.append(h("div", { class: "field" }, h("label", {}, n), input, options));
    }
    const read = h("button", { type: "button" }, "Read");
    read.addEventListener("click", () => {
      const uri = tmpl.replace(/\{[+#./;?&]?([A-Za-z0-9_]+)\*?\}/g, (_, n) => encodeURIComponent(inputs[n].value));
      MI.readResource(uri, pane);
    });
    pane.append(read);
  }

  // --- Prompts.
  async function loadPrompts() {
    const r = await MI.api("list", { kind: "prompts" });
    if (r.error) { MI.clear($("prompt-detail")).append(MI.errorBox(r.error)); return; }
    listPane($("prompt-list"), r.result, (p) => String(p.name), (p) => p.title || p.description, (p) => {
      const pane = MI.clear($("prompt-detail"));
      pane.append(h("h2", {}, String(p.title || p.name)), p.description ? h("p", {}, String(p.description)) : null);
      const inputs = {};
      for (const a of p.arguments || []) {
        const input = h("input", { type: "text", name: String(a.name) });
        inputs[a.name] = input;
        pane.append(h("div", { class: "field" }, h("label", {}, String(a.name), a.required ? h("span", { class: "req" }, " *") : null),
          a.description ? h("div", { class: "desc" }, String(a.description)) : null, input));
      }
      const get = h("button", { type: "button" }, "Get");
      const out = h("div", {});
      get.addEventListener("click", async () => {
        const args = {};
        for (const [k, v] of Object.entries(inputs)) if (v.value !== "") args[k] = v.value;
        const r = await MI.api("prompt", { name: p.name, arguments: args });
        MI.clear(out);
        if (r.error) return out.append(MI.errorBox(r.error));
        for (const m of r.result.messages || []) out.append(h("div", {}, h("strong", {}, String(m.role))), MI.block(m.content));
      });
      pane.append(get, out);
    });
  }

  // --- Tasks started from this page.
  const tasks = new Map();
  MI.trackTask = function (id, tool) {
    const status = h("span", { class: "badge" }, "working");
    const detail = h("div", {});
    const cancel = h("button", { type: "button", class: "task-cancel" }, "Cancel");
    cancel.addEventListener("click", async () => {
      const r = await MI.api("task", { taskId: id, action: "cancel" });
      if (r.error) detail.append(MI.errorBox(r.error));
    });
    const card = h("div", { class: "block task-card" }, h("div", { class: "row" }, h("code", {}, id), String(tool), status, cancel), detail);
    $("task-list").prepend(card);
    tasks.set(id, { status, detail, cancel });
  };
  MI.on("task", (e) => {
    const t = tasks.get(e.taskId);
    if (!t) return;
    if (e.status) {
      t.status.textContent = String(e.status.status) + (e.status.statusMessage ? ": " + e.status.statusMessage : "");
    }
    if (e.result) { t.status.textContent = "completed"; t.cancel.disabled = true; MI.clear(t.detail).append(MI.toolResult(e.result)); }
    if (e.error) { t.status.textContent = "ended"; t.cancel.disabled = true; MI.clear(t.detail).append(MI.errorBox(e.error)); }
  });
  MI.on("progress", (e) => {
    const p = e.params || {};
    const line = "progress " + String(p.progress) + (p.total !== undefined ? "/" + String(p.total) : "") + (p.message ? " " + p.message : "");
    const out = document.querySelector("#tool-detail .result");
    if (out) {
      let bar = out.querySelector(".progress");
      if (!bar) { bar = h("div", { class: "progress muted" }); out.prepend(bar); }
      bar.textContent = line;
    }
  });

  // --- Skills.
  async function loadSkills() {
    const r = await MI.api("list", { kind: "skills" });
    if (r.error) { MI.clear($("skill-list")); MI.clear($("skill-detail")).append(MI.errorBox(r.error)); return; }
    listPane($("skill-list"), r.result, (s) => String(s.name), (s) => s.description, (s) => {
      const pane = MI.clear($("skill-detail"));
      pane.append(h("h2", {}, String(s.name)), h("p", {}, String(s.description || "")), MI.json(s));
      if (s.uri) MI.readResource(String(s.uri), pane).then(() => MI.show("skills"));
    });
  }

  // --- Listen.
  MI.on("notification", (n) => {
    const log = $("listen-log");
    log.append(h("li", {}, new Date().toISOString().slice(11, 23) + " " + String(n.method) + " " + JSON.stringify(n.params || {})));
    while (log.childNodes.length > 500) log.firstChild.remove();
  });
  function setupListen() {
    $("l-start").addEventListener("click", async () => {
      const filter = {};
      if ($("l-tools").checked) filter.toolsListChanged = true;
      if ($("l-prompts").checked) filter.promptsListChanged = true;
      if ($("l-resources").checked) filter.resourcesListChanged = true;
      const uris = $("l-uris").value.split(",").map((s) => s.trim()).filter(Boolean);
      if (uris.length) filter.resourceSubscriptions = uris;
      const r = await MI.api("listen", { filter });
      $("l-state").textContent = r.error ? "error: " + r.error.message : "listening: " + JSON.stringify(r.result.acknowledged);
    });
    $("l-stop").addEventListener("click", async () => { await MI.api("unlisten", {}); $("l-state").textContent = "stopped"; });
  }

  MI.onShow.tools = loadTools;
  MI.onShow.resources = loadResources;
  MI.onShow.prompts = loadPrompts;
  MI.onShow.skills = loadSkills;
  MI.onConnect.push(() => { MI.tools = null; loadTools(); });
  document.addEventListener("DOMContentLoaded", setupListen);
})();
