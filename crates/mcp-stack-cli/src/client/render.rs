//! Human-readable output: tables, content blocks, discovery summaries, and files for binary
//! content.

use super::args::first_line;
use super::terminal;
use base64::Engine as _;
use console::style;
use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Where rendered text goes: stdout for results, stderr for tool errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stream {
    /// Standard output.
    Out,
    /// Standard error.
    Err,
}

impl Stream {
    /// Writes `s` (a broken pipe is ignored: `mcp ... | head` must not panic). On a terminal,
    /// control characters and escape sequences other than this tool's own styling are shown
    /// escaped ([`terminal::clean`]): whatever part of `s` came from the server cannot act on
    /// the terminal.
    pub(super) fn write(self, s: &str) {
        let escapes = match self {
            Stream::Out => terminal::stdout_escapes(),
            Stream::Err => terminal::stderr_escapes(),
        };
        self.write_raw(&terminal::clean(s, escapes));
    }

    /// Writes `s` as is (JSON documents: their bytes are the server's, escaped by JSON).
    pub(super) fn write_raw(self, s: &str) {
        let r = match self {
            Stream::Out => {
                let mut o = std::io::stdout().lock();
                o.write_all(s.as_bytes()).and_then(|()| o.flush())
            }
            Stream::Err => std::io::stderr().lock().write_all(s.as_bytes()),
        };
        drop(r);
    }

    /// Writes `s` and a newline.
    pub(super) fn line(self, s: &str) {
        self.write(&format!("{s}\n"));
    }

    fn is_term(self) -> bool {
        match self {
            Stream::Out => std::io::stdout().is_terminal(),
            Stream::Err => std::io::stderr().is_terminal(),
        }
    }

    /// Bold text when this stream shows colours.
    pub(super) fn bold(self, s: &str) -> String {
        let st = style(s).bold();
        match self {
            Stream::Out => st.to_string(),
            Stream::Err => st.for_stderr().to_string(),
        }
    }

    /// Dimmed text when this stream shows colours.
    pub(super) fn dim(self, s: &str) -> String {
        let st = style(s).dim();
        match self {
            Stream::Out => st.to_string(),
            Stream::Err => st.for_stderr().to_string(),
        }
    }
}

/// Prints one JSON document (pretty) on stdout.
pub(super) fn print_json(v: &Value) {
    Stream::Out.write_raw(&format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())));
}

/// Prints one JSON document on a single line on stdout (event streams).
pub(super) fn print_json_line(v: &Value) {
    Stream::Out.write_raw(&format!("{v}\n"));
}

/// The terminal width when stdout is a terminal (tables are not truncated otherwise).
fn terminal_width() -> Option<usize> {
    if !Stream::Out.is_term() {
        return None;
    }
    console::Term::stdout().size_checked().map(|(_, w)| usize::from(w))
}

/// A table: every column padded to its widest cell except the last, which is cut to the
/// terminal width (when there is a terminal).
/// Cells are escaped first when stdout escapes, so that the columns line up.
pub(super) fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    if terminal::stdout_escapes() {
        let rows: Vec<Vec<String>> =
            rows.iter().map(|r| r.iter().map(|c| terminal::escape(c).into_owned()).collect()).collect();
        return table_with_width(headers, &rows, terminal_width());
    }
    table_with_width(headers, rows, terminal_width())
}

fn table_with_width(headers: &[&str], rows: &[Vec<String>], width: Option<usize>) -> String {
    let n = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| console::measure_text_width(h)).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            widths[i] = widths[i].max(console::measure_text_width(c));
        }
    }
    // The columns before the last, padded; the last gets what is left of the line. When that
    // is too little, each row's last cell goes on its own indented line instead.
    const MIN_LAST: usize = 24;
    let prefix: usize = widths[..n - 1].iter().map(|w| w + 2).sum();
    let stacked = width.is_some_and(|w| prefix + MIN_LAST > w);
    let fit = |c: &str, room: usize| match width {
        Some(_) if console::measure_text_width(c) > room => console::truncate_str(c, room.max(8), "…").into_owned(),
        _ => c.to_owned(),
    };
    let mut out = String::new();
    let mut line = |cells: &[String], header: bool| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate().take(n - 1) {
            s.push_str(c);
            s.push_str(&" ".repeat(widths[i] - console::measure_text_width(c) + 2));
        }
        let last = cells.get(n - 1).map(String::as_str).unwrap_or("");
        let w = width.unwrap_or(usize::MAX);
        let mut s = if stacked {
            let s = fit(s.trim_end(), w);
            if header || last.is_empty() {
                s
            } else {
                format!("{s}\n    {}", fit(last, w.saturating_sub(4)))
            }
        } else {
            let room = w.saturating_sub(console::measure_text_width(&s));
            s.push_str(&fit(last, room));
            s
        };
        s = s.trim_end().to_owned();
        out.push_str(&if header { Stream::Out.bold(&s) } else { s });
        out.push('\n');
    };
    let head: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    line(&head, true);
    for r in rows {
        line(r, false);
    }
    out
}

fn str_field<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// "title — description" (either may be missing), on one line.
fn title_desc(v: &Value) -> String {
    let title =
        str_field(v, "title").or_else(|| v.pointer("/annotations/title").and_then(Value::as_str)).map(first_line);
    let desc = str_field(v, "description").map(first_line);
    match (title, desc) {
        (Some(t), Some(d)) if !d.is_empty() => format!("{t} — {d}"),
        (Some(t), _) => t,
        (None, Some(d)) => d,
        (None, None) => String::new(),
    }
}

/// The hints of a tool's `annotations`, compactly.
fn hints(tool: &Value) -> String {
    let Some(a) = tool.get("annotations") else {
        return String::new();
    };
    let flag = |k: &str| a.get(k).and_then(Value::as_bool);
    let mut out = Vec::new();
    if flag("readOnlyHint") == Some(true) {
        out.push("read-only");
    } else if flag("destructiveHint") == Some(false) {
        out.push("non-destructive");
    } else if flag("destructiveHint") == Some(true) {
        out.push("destructive");
    }
    if flag("idempotentHint") == Some(true) {
        out.push("idempotent");
    }
    match flag("openWorldHint") {
        Some(true) => out.push("open-world"),
        Some(false) => out.push("closed-world"),
        None => {}
    }
    out.join(",")
}

/// The `tools list` table.
pub(super) fn tools_table(tools: &[Value]) -> String {
    if tools.is_empty() {
        return "(no tools)\n".into();
    }
    let rows: Vec<Vec<String>> =
        tools.iter().map(|t| vec![str_field(t, "name").unwrap_or("?").to_owned(), hints(t), title_desc(t)]).collect();
    table(&["NAME", "HINTS", "DESCRIPTION"], &rows)
}

/// The `resources list` table.
pub(super) fn resources_table(resources: &[Value]) -> String {
    if resources.is_empty() {
        return "(no resources)\n".into();
    }
    let rows: Vec<Vec<String>> = resources
        .iter()
        .map(|r| {
            vec![
                str_field(r, "uri").unwrap_or("?").to_owned(),
                str_field(r, "name").unwrap_or("").to_owned(),
                str_field(r, "mimeType").unwrap_or("").to_owned(),
                title_desc(r),
            ]
        })
        .collect();
    table(&["URI", "NAME", "MIME TYPE", "DESCRIPTION"], &rows)
}

/// The `resources templates` table.
pub(super) fn templates_table(templates: &[Value]) -> String {
    if templates.is_empty() {
        return "(no resource templates)\n".into();
    }
    let rows: Vec<Vec<String>> = templates
        .iter()
        .map(|r| {
            vec![
                str_field(r, "uriTemplate").unwrap_or("?").to_owned(),
                str_field(r, "name").unwrap_or("").to_owned(),
                str_field(r, "mimeType").unwrap_or("").to_owned(),
                title_desc(r),
            ]
        })
        .collect();
    table(&["URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"], &rows)
}

/// The `prompts list` table (`*` marks required arguments).
pub(super) fn prompts_table(prompts: &[Value]) -> String {
    if prompts.is_empty() {
        return "(no prompts)\n".into();
    }
    let rows: Vec<Vec<String>> = prompts
        .iter()
        .map(|p| {
            let args = p
                .get("arguments")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|x| {
                            let n = str_field(x, "name").unwrap_or("?");
                            if x.get("required").and_then(Value::as_bool) == Some(true) {
                                format!("{n}*")
                            } else {
                                n.to_owned()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            vec![str_field(p, "name").unwrap_or("?").to_owned(), args, title_desc(p)]
        })
        .collect();
    table(&["NAME", "ARGUMENTS", "DESCRIPTION"], &rows)
}

/// Argument lines of a prompt, for error hints.
pub(super) fn prompt_hint(prompt: &Value) -> Vec<String> {
    let name = str_field(prompt, "name").unwrap_or("?");
    let args = prompt.get("arguments").and_then(Value::as_array).cloned().unwrap_or_default();
    if args.is_empty() {
        return vec![format!("`{name}` takes no arguments")];
    }
    let mut out = vec![format!("arguments of `{name}` (pass them as --arg NAME=VALUE):")];
    for a in args {
        let req = if a.get("required").and_then(Value::as_bool) == Some(true) { "required" } else { "optional" };
        let desc = str_field(&a, "description").map(|d| format!(" — {}", first_line(d))).unwrap_or_default();
        out.push(format!("  {}  {req}{desc}", str_field(&a, "name").unwrap_or("?")));
    }
    out
}

/// The `discover` summary.
pub(super) fn discover(era: &str, version: &str, result: &Value) -> String {
    let info = result
        .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
        .or_else(|| result.get("serverInfo"))
        .cloned()
        .unwrap_or(Value::Null);
    let mut server =
        format!("{} {}", str_field(&info, "name").unwrap_or("(unnamed)"), str_field(&info, "version").unwrap_or(""))
            .trim_end()
            .to_owned();
    if let Some(t) = str_field(&info, "title") {
        server.push_str(&format!(" — {t}"));
    }
    let mut rows: Vec<(String, String)> = vec![("Server".into(), server), ("Era".into(), era_line(era, version))];
    if let Some(vs) = result.get("supportedVersions").and_then(Value::as_array) {
        let vs: Vec<&str> = vs.iter().filter_map(Value::as_str).collect();
        rows.push(("Versions".into(), vs.join(", ")));
    }
    rows.push(("Capabilities".into(), capabilities(result.get("capabilities").unwrap_or(&Value::Null))));
    if let Some(w) = str_field(&info, "websiteUrl") {
        rows.push(("Website".into(), w.to_owned()));
    }
    let mut out = String::new();
    for (k, v) in rows {
        out.push_str(&format!("{}  {v}\n", Stream::Out.bold(&format!("{k:<12}"))));
    }
    if let Some(i) = str_field(result, "instructions").filter(|i| !i.trim().is_empty()) {
        out.push_str(&format!("{}\n", Stream::Out.bold("Instructions")));
        for l in i.lines() {
            out.push_str(&format!("  {l}\n"));
        }
    }
    out
}

fn era_line(era: &str, version: &str) -> String {
    match era {
        "modern" => format!("modern (stateless), protocol {version}"),
        _ => format!("legacy (initialize handshake), protocol {version}"),
    }
}

/// `tools (listChanged), resources (subscribe, listChanged), ...`
pub(super) fn capabilities(caps: &Value) -> String {
    let Some(m) = caps.as_object().filter(|m| !m.is_empty()) else {
        return "(none)".into();
    };
    m.iter()
        .map(|(k, v)| {
            let subs: Vec<&str> = v
                .as_object()
                .map(|o| {
                    o.iter()
                        .filter(|(_, x)| !matches!(x, Value::Bool(false) | Value::Null))
                        .map(|(s, _)| s.as_str())
                        .collect()
                })
                .unwrap_or_default();
            if subs.is_empty() {
                k.clone()
            } else {
                format!("{k} ({})", subs.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes binary content to a new file in `dir`, named after `stem` with an extension for
/// `mime`; never overwrites an existing file. Returns the path.
pub(super) fn save_base64(dir: &Path, stem: &str, mime: Option<&str>, data: &str) -> Result<PathBuf, String> {
    let cleaned: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(cleaned.as_bytes())
        .map_err(|e| format!("the server sent invalid base64 data: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = sanitize(stem);
    let ext = mime.map(extension_for).unwrap_or("bin");
    let has_ext = Path::new(&stem).extension().is_some_and(|e| e.eq_ignore_ascii_case(ext));
    let file = |n: usize| -> PathBuf {
        if has_ext {
            let s = Path::new(&stem).file_stem().and_then(|s| s.to_str()).unwrap_or("content");
            if n == 0 {
                dir.join(&stem)
            } else {
                dir.join(format!("{s}-{n}.{ext}"))
            }
        } else if n == 0 {
            dir.join(format!("{stem}.{ext}"))
        } else {
            dir.join(format!("{stem}-{n}.{ext}"))
        }
    };
    for n in 0..10_000 {
        let path = file(n);
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                f.write_all(&bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
        }
    }
    Err(format!("too many files named {stem}* in {}", dir.display()))
}

/// `s` as a file name: ASCII letters, digits, `-`, `_` and `.` kept, anything else `_`.
pub(super) fn sanitize(s: &str) -> String {
    let s: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    let s = s.trim_matches('.').to_owned();
    if s.is_empty() {
        "content".into()
    } else {
        s
    }
}

/// A file extension for a MIME type.
pub(super) fn extension_for(mime: &str) -> &'static str {
    let m = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match m.as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/bmp" => "bmp",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "audio/webm" => "webm",
        "audio/flac" => "flac",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "application/zip" => "zip",
        "text/plain" => "txt",
        "text/html" => "html",
        "text/markdown" => "md",
        "text/csv" => "csv",
        _ => "bin",
    }
}

/// Renders content blocks (tool results, prompt messages).
pub(super) struct ContentRenderer<'a> {
    /// Where binary content is saved.
    pub out_dir: &'a Path,
    /// File name stem for saved content (`<stem>-<n>.<ext>`).
    pub stem: &'a str,
    /// Counter for saved files.
    pub saved: usize,
}

impl ContentRenderer<'_> {
    /// Renders one content block as text (saving binary data to a file).
    pub(super) fn block(&mut self, b: &Value) -> String {
        let ty = str_field(b, "type").unwrap_or("");
        match ty {
            "text" => {
                let t = str_field(b, "text").unwrap_or("");
                if t.ends_with('\n') {
                    t.to_owned()
                } else {
                    format!("{t}\n")
                }
            }
            "image" | "audio" => {
                let mime = str_field(b, "mimeType");
                let data = str_field(b, "data").unwrap_or("");
                self.saved += 1;
                let stem = format!("{}-{}", self.stem, self.saved);
                match save_base64(self.out_dir, &stem, mime, data) {
                    Ok(p) => format!(
                        "[{ty} {}, {} saved to {}]\n",
                        mime.unwrap_or("?"),
                        human_bytes(decoded_len(data)),
                        p.display()
                    ),
                    Err(e) => format!("[{ty} {}: not saved: {e}]\n", mime.unwrap_or("?")),
                }
            }
            "resource_link" => {
                let mut s = format!("[resource link] {}", str_field(b, "uri").unwrap_or("?"));
                let name = str_field(b, "title").or_else(|| str_field(b, "name"));
                if let Some(n) = name {
                    s.push_str(&format!(" — {n}"));
                }
                if let Some(m) = str_field(b, "mimeType") {
                    s.push_str(&format!(" ({m})"));
                }
                if let Some(d) = str_field(b, "description") {
                    s.push_str(&format!(": {}", first_line(d)));
                }
                s + "\n"
            }
            "resource" => {
                let r = b.get("resource").cloned().unwrap_or(Value::Null);
                self.embedded(&r)
            }
            _ => format!("[{} content] {}\n", if ty.is_empty() { "unknown" } else { ty }, b),
        }
    }

    /// An embedded resource: a heading, then its text (or the file its blob went to).
    pub(super) fn embedded(&mut self, r: &Value) -> String {
        let uri = str_field(r, "uri").unwrap_or("?");
        let mime = str_field(r, "mimeType");
        let mut s = format!("[resource {uri}{}]\n", mime.map(|m| format!(" ({m})")).unwrap_or_default());
        if let Some(t) = str_field(r, "text") {
            s.push_str(t);
            if !t.ends_with('\n') {
                s.push('\n');
            }
        } else if let Some(data) = str_field(r, "blob") {
            self.saved += 1;
            let stem = format!("{}-{}", self.stem, self.saved);
            match save_base64(self.out_dir, &stem, mime, data) {
                Ok(p) => s.push_str(&format!("[{} saved to {}]\n", human_bytes(decoded_len(data)), p.display())),
                Err(e) => s.push_str(&format!("[not saved: {e}]\n")),
            }
        }
        s
    }
}

fn decoded_len(b64: &str) -> usize {
    let n = b64.chars().filter(|c| !c.is_ascii_whitespace()).count();
    let pad = b64.trim_end().chars().rev().take_while(|c| *c == '=').count();
    (n / 4 * 3).saturating_sub(pad)
}

fn human_bytes(n: usize) -> String {
    if n < 10 * 1024 {
        format!("{n} bytes")
    } else if n < 10 * 1024 * 1024 {
        format!("{} KiB", n / 1024)
    } else {
        format!("{} MiB", n / (1024 * 1024))
    }
}

/// Renders a `CallToolResult`, showing the result once when it has both text and
/// `structuredContent`:
/// - a text block that is the JSON of the structured content (the serialized copy tools send
///   for older clients) is left out, and the structured content is printed as pretty JSON;
/// - a text block that says something else (the tool's own human-readable rendering) is
///   printed, and the structured content is not (`--json` prints the whole result; a note on
///   a terminal's stderr says so);
/// - without text blocks, the structured content is printed after the other blocks.
pub(super) fn tool_result(result: &Value, r: &mut ContentRenderer<'_>) -> String {
    let (out, omitted) = tool_result_parts(result, r);
    if omitted && Stream::Err.is_term() {
        Stream::Err.line(&Stream::Err.dim("(the result also has structuredContent: --json prints it)"));
    }
    out
}

/// [`tool_result`]'s text, and whether the structured content was left out.
fn tool_result_parts(result: &Value, r: &mut ContentRenderer<'_>) -> (String, bool) {
    let structured = result.get("structuredContent");
    let mut out = String::new();
    let mut own_text = false;
    for b in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        if let Some(t) = b.get("text").and_then(Value::as_str) {
            if structured.is_some() && serde_json::from_str::<Value>(t).ok().as_ref() == structured {
                continue;
            }
            own_text = true;
        }
        out.push_str(&r.block(b));
    }
    match structured {
        Some(_) if own_text => return (out, true),
        Some(s) => {
            out.push_str(&serde_json::to_string_pretty(s).unwrap_or_default());
            out.push('\n');
        }
        None => {}
    }
    (out, false)
}

/// Renders a `GetPromptResult`: the description, then each message under a role heading.
pub(super) fn prompt_result(result: &Value, r: &mut ContentRenderer<'_>) -> String {
    let mut out = String::new();
    if let Some(d) = str_field(result, "description") {
        out.push_str(&format!("{}\n", Stream::Out.dim(d)));
    }
    for m in result.get("messages").and_then(Value::as_array).into_iter().flatten() {
        let role = str_field(m, "role").unwrap_or("?");
        out.push_str(&format!("{}\n", Stream::Out.bold(&format!("── {role} ──"))));
        match m.get("content") {
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    out.push_str(&r.block(b));
                }
            }
            Some(b) => out.push_str(&r.block(b)),
            None => {}
        }
    }
    out
}

/// A one-line summary of a listen event.
pub(super) fn notification_line(method: &str, params: &Value) -> String {
    let short = method.strip_prefix("notifications/").unwrap_or(method);
    let mut s = format!("{} {short}", timestamp());
    if let Some(uri) = str_field(params, "uri") {
        s.push_str(&format!(" {uri}"));
    }
    let mut rest = params.clone();
    if let Some(o) = rest.as_object_mut() {
        o.remove("_meta");
        o.remove("uri");
        if !o.is_empty() {
            s.push_str(&format!(" {rest}"));
        }
    }
    s
}

/// `HH:MM:SS` (UTC).
fn timestamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let d = secs % 86_400;
    format!("{:02}:{:02}:{:02}", d / 3600, d / 60 % 60, d % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn table_truncates_last_column() {
        let rows = vec![vec!["a".to_string(), "x".repeat(50)]];
        let t = table_with_width(&["N", "DESC"], &rows, Some(20));
        let last = t.lines().last().unwrap();
        assert!(console::measure_text_width(last) <= 20, "{last}");
        assert!(last.ends_with('…'));
        let t = table_with_width(&["N", "DESC"], &rows, None);
        assert!(t.lines().last().unwrap().ends_with("xxx"));
        // Too narrow for the last column beside the others: it goes on its own line.
        let rows = vec![vec!["n".repeat(30), "d".repeat(50)]];
        let t = table_with_width(&["NAME", "DESC"], &rows, Some(40));
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        assert_eq!(lines[1], "n".repeat(30));
        assert!(lines[2].starts_with("    ddd") && console::measure_text_width(lines[2]) <= 40);
    }

    #[test]
    fn structured_content_shown_once() {
        let dir = std::env::temp_dir();
        let mut r = ContentRenderer { out_dir: &dir, stem: "t", saved: 0 };
        let res = json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}});
        assert_eq!(tool_result_parts(&res, &mut r), ("{\n  \"sum\": 3\n}\n".to_owned(), false));
        // Text that is the same JSON differently spaced is still a copy.
        let res = json!({"content": [{"type": "text", "text": "{ \"sum\" : 3 }"}], "structuredContent": {"sum": 3}});
        assert_eq!(tool_result_parts(&res, &mut r).0, "{\n  \"sum\": 3\n}\n");
        // The tool's own wording wins over the data.
        let res = json!({"content": [{"type": "text", "text": "The sum is 3."}], "structuredContent": {"sum": 3}});
        assert_eq!(tool_result_parts(&res, &mut r), ("The sum is 3.\n".to_owned(), true));
        // Structured content alone is shown.
        let res = json!({"content": [], "structuredContent": {"sum": 3}});
        assert_eq!(tool_result_parts(&res, &mut r), ("{\n  \"sum\": 3\n}\n".to_owned(), false));
    }

    #[test]
    fn saves_without_overwriting() {
        let dir = std::env::temp_dir().join(format!("mcp-cli-render-{}", std::process::id()));
        let a = save_base64(&dir, "img", Some("image/png"), "aGVsbG8=").unwrap();
        let b = save_base64(&dir, "img", Some("image/png"), "aGVsbG8=").unwrap();
        assert_ne!(a, b);
        assert_eq!(std::fs::read(&a).unwrap(), b"hello");
        assert!(a.to_string_lossy().ends_with("img.png"));
        assert!(b.to_string_lossy().ends_with("img-1.png"));
        let c = save_base64(&dir, "photo.png", Some("image/png"), "aGVsbG8=").unwrap();
        assert!(c.to_string_lossy().ends_with("photo.png"));
        let d = save_base64(&dir, "photo.png", Some("image/png"), "aGVsbG8=").unwrap();
        assert!(d.to_string_lossy().ends_with("photo-1.png"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
