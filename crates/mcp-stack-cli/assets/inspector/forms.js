// Forms generated from JSON Schema (a tool's inputSchema, an elicitation's requestedSchema):
// objects with required fields, enums, numbers, booleans, nested objects and arrays; anything
// else is edited as JSON. `MI.form(schema)` gives `{el, value()}`; `value()` throws, naming
// the field, when something cannot be read.
"use strict";

(function () {
  const h = MI.h;
  const MAX_DEPTH = 8;

  function typeOf(s) {
    if (!s || typeof s !== "object") return "json";
    let t = s.type;
    if (Array.isArray(t)) t = t.find((x) => x !== "null");
    if (Array.isArray(s.enum) || Array.isArray(s.oneOf) && s.oneOf.every((o) => o && "const" in o)) return "enum";
    if (t === "object" && s.properties && typeof s.properties === "object") return "object";
    if (["string", "number", "integer", "boolean", "array"].includes(t)) return t;
    return "json";
  }

  function enumOptions(s) {
    if (Array.isArray(s.enum)) {
      const names = Array.isArray(s.enumNames) ? s.enumNames : [];
      return s.enum.map((v, i) => ({ value: v, label: names[i] !== undefined ? String(names[i]) : JSON.stringify(v) }));
    }
    return s.oneOf.map((o) => ({ value: o.const, label: String(o.title !== undefined ? o.title : JSON.stringify(o.const)) }));
  }

  // One editor for schema `s` at `path`; `{el, read(): {set: bool, value}}`.
  function editor(s, path, depth) {
    const kind = depth > MAX_DEPTH ? "json" : typeOf(s);
    const dflt = s && s.default;
    switch (kind) {
      case "object": return objectEditor(s, path, depth);
      case "enum": {
        const opts = enumOptions(s);
        const sel = h("select", { name: path }, h("option", { value: "" }, "(none)"),
          opts.map((o, i) => h("option", { value: String(i) }, o.label)));
        const at = opts.findIndex((o) => JSON.stringify(o.value) === JSON.stringify(dflt));
        if (at >= 0) sel.value = String(at);
        return { el: sel, read: () => (sel.value === "" ? { set: false } : { set: true, value: opts[Number(sel.value)].value }) };
      }
      case "boolean": {
        const box = h("input", { type: "checkbox", name: path, checked: dflt === true });
        const touched = { v: dflt !== undefined };
        box.addEventListener("change", () => { touched.v = true; });
        return { el: box, read: () => (touched.v ? { set: true, value: box.checked } : { set: false }) };
      }
      case "number":
      case "integer": {
        const input = h("input", { type: "number", name: path, step: kind === "integer" ? "1" : "any", value: dflt });
        return { el: input, read: () => {
          if (input.value === "") return { set: false };
          const n = Number(input.value);
          if (!Number.isFinite(n) || (kind === "integer" && !Number.isInteger(n))) throw new Error(path + ": not " + (kind === "integer" ? "an integer" : "a number"));
          return { set: true, value: n };
        } };
      }
      case "string": {
        const long = (s.maxLength || 0) > 200 || s.format === "textarea";
        const input = long ? h("textarea", { name: path, rows: 3 }) : h("input", { type: "text", name: path });
        if (typeof dflt === "string") input.value = dflt;
        return { el: input, read: () => (input.value === "" ? { set: false } : { set: true, value: input.value }) };
      }
      case "array": return arrayEditor(s, path, depth);
      default: {
        const area = h("textarea", { class: "json", name: path, rows: 3, placeholder: "JSON" });
        if (dflt !== undefined) area.value = JSON.stringify(dflt);
        return { el: area, read: () => {
          if (area.value.trim() === "") return { set: false };
          try { return { set: true, value: JSON.parse(area.value) }; } catch (e) { throw new Error(path + ": " + e.message); }
        } };
      }
    }
  }

  function arrayEditor(s, path, depth) {
    const items = s.items && typeof s.items === "object" ? s.items : {};
    const list = h("div", {});
    const editors = [];
    const add = () => {
      const ed = editor(items, path + "[" + editors.length + "]", depth + 1);
      const remove = h("button", { type: "button" }, "−");
      const row = h("div", { class: "row" }, ed.el, remove);
      const entry = { ed, row };
      remove.addEventListener("click", () => { row.remove(); editors.splice(editors.indexOf(entry), 1); });
      editors.push(entry);
      list.append(row);
    };
    const plus = h("button", { type: "button", class: "add" }, "+ item");
    plus.addEventListener("click", add);
    const el = h("div", {}, list, plus);
    return { el, read: () => {
      const values = [];
      for (const { ed } of editors) {
        const r = ed.read();
        if (r.set) values.push(r.value);
      }
      return values.length ? { set: true, value: values } : { set: false };
    } };
  }

  function objectEditor(s, path, depth) {
    const required = new Set(Array.isArray(s.required) ? s.required : []);
    const fields = [];
    const el = depth === 0 ? h("div", {}) : h("fieldset", {}, h("legend", {}, path));
    for (const [name, prop] of Object.entries(s.properties || {})) {
      const sub = path ? path + "." + name : name;
      const ed = editor(prop || {}, sub, depth + 1);
      const title = prop && prop.title ? String(prop.title) + " (" + name + ")" : name;
      const label = h("label", {}, title, required.has(name) ? h("span", { class: "req" }, " *") : null);
      const desc = prop && prop.description ? h("div", { class: "desc" }, String(prop.description)) : null;
      el.append(h("div", { class: "field" }, label, desc, ed.el));
      fields.push({ name, sub, ed });
    }
    return { el, read: () => {
      const out = {};
      for (const { name, sub, ed } of fields) {
        const r = ed.read();
        if (r.set) out[name] = r.value;
        else if (required.has(name)) throw new Error((sub || name) + " is required");
      }
      return { set: Object.keys(out).length > 0 || depth === 0, value: out };
    } };
  }

  // A form for `schema` with a switch to raw JSON.
  MI.form = function (schema) {
    const s = schema && typeof schema === "object" ? schema : {};
    const generated = typeOf(s) === "object" ? objectEditor(s, "", 0) : editor(s, "value", 1);
    const raw = h("textarea", { class: "json raw-args", rows: 6, hidden: true }, "{}");
    const toggle = h("label", { class: "muted" }, h("input", { type: "checkbox", class: "raw-toggle" }), " raw JSON");
    const box = toggle.firstChild;
    box.addEventListener("change", () => {
      if (box.checked) {
        try { raw.value = JSON.stringify(generated.read().value || {}, null, 2); } catch (e) { /* keep */ }
      }
      raw.hidden = !box.checked;
      generated.el.hidden = box.checked;
    });
    const el = h("div", { class: "form" }, toggle, generated.el, raw);
    return { el, value: () => {
      if (box.checked) return JSON.parse(raw.value || "{}");
      const r = generated.read();
      return r.set ? r.value : {};
    } };
  };
})();
