//! The terminal side of a call: the progress bar, server log lines, and the prompts that
//! answer a server's elicitation (form and URL mode) and sampling requests.
//!
//! Prompts are written to stderr and answers read from stdin, line by line. When stdin is
//! not a terminal the client declines (unless `--interactive` asks to read piped answers).
//! A URL is never opened without the user's consent, never prefetched, and never opened at
//! all unless stdin is a real terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcp_client::ClientError;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

/// Only one prompt at a time (input requests of a round are answered in turn anyway).
static PROMPT: Mutex<()> = Mutex::new(());

/// Shared terminal state of one command.
#[derive(Debug)]
pub(super) struct Ui {
    /// May ask the user (elicitation/sampling enabled and stdin usable).
    prompt: bool,
    /// stdin is a real terminal (a browser may be opened, with consent).
    tty: bool,
    bar: Mutex<Option<ProgressBar>>,
    server: Mutex<String>,
}

fn bold(s: &str) -> String {
    console::style(s).bold().for_stderr().to_string()
}

fn dim(s: &str) -> String {
    console::style(s).dim().for_stderr().to_string()
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.2}")
    }
}

impl Ui {
    /// `enabled`: elicitation/sampling are on (not `--no-input`); `force`: prompt even when
    /// stdin is not a terminal (`--interactive`).
    pub(super) fn new(enabled: bool, force: bool) -> Self {
        let tty = std::io::stdin().is_terminal();
        Self { prompt: enabled && (tty || force), tty, bar: Mutex::new(None), server: Mutex::new("the server".into()) }
    }

    /// Names the server in prompts.
    pub(super) fn set_server(&self, name: String) {
        *self.server.lock() = name;
    }

    fn server(&self) -> String {
        self.server.lock().clone()
    }

    /// Shows a `notifications/progress` update.
    pub(super) fn progress(&self, p: &Value) {
        let Some(progress) = p.get("progress").and_then(Value::as_f64) else {
            return;
        };
        let total = p.get("total").and_then(Value::as_f64).filter(|t| *t > 0.0);
        let msg = p.get("message").and_then(Value::as_str).unwrap_or("");
        let msg = super::terminal::err(msg);
        let mut g = self.bar.lock();
        let bar = g.get_or_insert_with(|| ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr()));
        match total {
            Some(t) => {
                if let Ok(s) = ProgressStyle::with_template("{spinner} [{bar:30}] {msg}") {
                    bar.set_style(s.progress_chars("=> "));
                }
                bar.set_length(1000);
                bar.set_position(((progress / t).clamp(0.0, 1.0) * 1000.0) as u64);
                bar.set_message(format!("{}/{} {msg}", num(progress), num(t)));
            }
            None => {
                if let Ok(s) = ProgressStyle::with_template("{spinner} {msg}") {
                    bar.set_style(s);
                }
                bar.set_message(format!("{} {msg}", num(progress)));
                bar.tick();
            }
        }
    }

    /// Shows a task's status (a spinner with its status message on a terminal; a line per
    /// change otherwise).
    pub(super) fn task_status(&self, task: &Value) {
        let status = task.get("status").and_then(Value::as_str).unwrap_or("?");
        let msg = task.get("statusMessage").and_then(Value::as_str).unwrap_or("");
        let id = task.get("taskId").and_then(Value::as_str).unwrap_or("");
        let line = if msg.is_empty() { format!("task {status}") } else { format!("task {status}: {msg}") };
        let line = super::terminal::err(&line).into_owned();
        if !std::io::stderr().is_terminal() {
            let id = super::terminal::err(id);
            eprintln!("{}", dim(&format!("[task {id}] {}", line.trim_start_matches("task "))));
            return;
        }
        let mut g = self.bar.lock();
        let bar = g.get_or_insert_with(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(s) = ProgressStyle::with_template("{spinner} {msg} {elapsed:.dim}") {
                b.set_style(s);
            }
            b.enable_steady_tick(std::time::Duration::from_millis(120));
            b
        });
        bar.set_message(line);
    }

    /// Removes the progress bar (before a prompt, and when the call is over).
    pub(super) fn finish_progress(&self) {
        if let Some(b) = self.bar.lock().take() {
            b.finish_and_clear();
        }
    }

    /// Prints a line on stderr without tearing the progress bar (escaped on a terminal: log
    /// lines are the server's text).
    pub(super) fn note(&self, line: &str) {
        let line = super::terminal::clean(line, super::terminal::stderr_escapes());
        let g = self.bar.lock();
        match g.as_ref() {
            Some(b) => b.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// Shows a `notifications/message` (server log) line.
    pub(super) fn log(&self, p: &Value) {
        let level = p.get("level").and_then(Value::as_str).unwrap_or("info");
        let logger = p.get("logger").and_then(Value::as_str).map(|l| format!(" {l}")).unwrap_or_default();
        let data = match p.get("data") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        };
        self.note(&dim(&format!("[{level}{logger}] {data}")));
    }

    /// Answers `elicitation/create`.
    pub(super) async fn elicit(self: Arc<Self>, params: Value) -> Result<Value, ClientError> {
        self.finish_progress();
        tokio::task::spawn_blocking(move || self.elicit_blocking(&params))
            .await
            .map_err(|e| ClientError::handler(format!("elicitation prompt failed: {e}")).caused_by(e))?
    }

    fn elicit_blocking(&self, params: &Value) -> Result<Value, ClientError> {
        let _one = PROMPT.lock();
        let server = self.server();
        let mode = params.get("mode").and_then(Value::as_str).unwrap_or("form");
        let message = params.get("message").and_then(Value::as_str).unwrap_or("");
        // Every prompt shows the server's text: escaped on a terminal.
        let mut err = super::terminal::ErrWriter::new();
        if !self.prompt {
            let _ = writeln!(
                err,
                "mcp: declined a {mode} elicitation from {server} (stdin is not a terminal; \
                 --interactive reads answers from piped input): {message}"
            );
            return Ok(json!({ "action": "decline" }));
        }
        let stdin = std::io::stdin();
        let mut t = Term { input: &mut stdin.lock(), out: &mut err, echo: !self.tty };
        let r = if mode == "url" {
            url_elicitation(params, &server, self.tty, &mut t)
        } else {
            form_elicitation(params, &server, &mut t)
        };
        r.map_err(|e| ClientError::handler(format!("reading the answer failed: {e}")).caused_by(e))
    }

    /// Answers `sampling/createMessage` with the user's typed reply.
    pub(super) async fn sample(self: Arc<Self>, params: Value) -> Result<Value, ClientError> {
        self.finish_progress();
        tokio::task::spawn_blocking(move || self.sample_blocking(&params))
            .await
            .map_err(|e| ClientError::handler(format!("sampling prompt failed: {e}")).caused_by(e))?
    }

    fn sample_blocking(&self, params: &Value) -> Result<Value, ClientError> {
        let _one = PROMPT.lock();
        let server = self.server();
        if !self.prompt {
            return Err(ClientError::handler(format!(
                "declined a sampling request from {server}: stdin is not a terminal \
                 (--interactive reads the reply from piped input)"
            )));
        }
        let stdin = std::io::stdin();
        let mut err = super::terminal::ErrWriter::new();
        let mut t = Term { input: &mut stdin.lock(), out: &mut err, echo: !self.tty };
        let reply = sampling_prompt(params, &server, &mut t)
            .map_err(|e| ClientError::handler(format!("reading the reply failed: {e}")).caused_by(e))?;
        match reply {
            Some(text) => Ok(json!({
                "role": "assistant",
                "content": { "type": "text", "text": text },
                "model": "human",
                "stopReason": "endTurn",
            })),
            None => Err(ClientError::handler(format!("declined the sampling request from {server} (empty reply)"))),
        }
    }
}

/// Where prompts go and answers come from. `echo` repeats each answer after its prompt (for
/// piped input, which the terminal does not show).
pub(crate) struct Term<'a> {
    pub(crate) input: &'a mut dyn BufRead,
    pub(crate) out: &'a mut dyn Write,
    pub(crate) echo: bool,
}

impl Term<'_> {
    /// Reads one line; `None` at end of input.
    fn read_line(&mut self) -> std::io::Result<Option<String>> {
        let mut s = String::new();
        if self.input.read_line(&mut s)? == 0 {
            writeln!(self.out)?;
            return Ok(None);
        }
        let s = s.trim_end_matches(['\n', '\r']).to_owned();
        if self.echo {
            writeln!(self.out, "{s}")?;
        }
        Ok(Some(s))
    }

    fn ask(&mut self, prompt: &str) -> std::io::Result<Option<String>> {
        write!(self.out, "{prompt}")?;
        self.out.flush()?;
        self.read_line()
    }
}

/// What one field prompt produced.
enum Field {
    Value(Value),
    Skip,
    Decline,
    Cancel,
}

/// How a property is asked for.
enum Kind {
    Text,
    Bool,
    Number {
        integer: bool,
    },
    /// Choices: (value, label); `multi` for arrays of enums.
    Choice {
        options: Vec<(Value, String)>,
        multi: bool,
    },
}

fn titled(list: &[Value]) -> Option<Vec<(Value, String)>> {
    let opts: Vec<(Value, String)> = list
        .iter()
        .filter_map(|o| {
            let c = o.get("const")?;
            let label = o.get("title").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| plain(c));
            Some((c.clone(), label))
        })
        .collect();
    (!opts.is_empty() && opts.len() == list.len()).then_some(opts)
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn enum_options(p: &Value) -> Option<Vec<(Value, String)>> {
    if let Some(vals) = p.get("enum").and_then(Value::as_array) {
        let names = p.get("enumNames").and_then(Value::as_array);
        return Some(
            vals.iter()
                .enumerate()
                .map(|(i, v)| {
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .unwrap_or_else(|| plain(v));
                    (v.clone(), label)
                })
                .collect(),
        );
    }
    for k in ["oneOf", "anyOf"] {
        if let Some(list) = p.get(k).and_then(Value::as_array) {
            if let Some(o) = titled(list) {
                return Some(o);
            }
        }
    }
    None
}

fn classify(p: &Value) -> Kind {
    let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
    if ty == "array" {
        if let Some(options) = p.get("items").and_then(enum_options) {
            return Kind::Choice { options, multi: true };
        }
    }
    if let Some(options) = enum_options(p) {
        return Kind::Choice { options, multi: false };
    }
    match ty {
        "boolean" => Kind::Bool,
        "integer" => Kind::Number { integer: true },
        "number" => Kind::Number { integer: false },
        _ => Kind::Text,
    }
}

fn check_text(p: &Value, s: &str) -> Result<(), String> {
    let n = s.chars().count() as u64;
    if let Some(min) = p.get("minLength").and_then(Value::as_u64) {
        if n < min {
            return Err(format!("at least {min} characters, please"));
        }
    }
    if let Some(max) = p.get("maxLength").and_then(Value::as_u64) {
        if n > max {
            return Err(format!("at most {max} characters, please"));
        }
    }
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let is_date = |t: &str| {
        let parts: Vec<&str> = t.split('-').collect();
        parts.len() == 3
            && parts[0].len() == 4
            && parts[1].len() == 2
            && parts[2].len() == 2
            && parts.iter().all(|x| digits(x))
    };
    match p.get("format").and_then(Value::as_str) {
        Some("email") => {
            let ok = s
                .split_once('@')
                .is_some_and(|(a, b)| !a.is_empty() && b.contains('.') && !s.contains(char::is_whitespace));
            if !ok {
                return Err("an email address, please (name@example.com)".into());
            }
        }
        Some("uri") if url::Url::parse(s).is_err() => {
            return Err("an absolute URI, please (scheme:...)".into());
        }
        Some("date") if !is_date(s) => return Err("a date, please (YYYY-MM-DD)".into()),
        Some("date-time") => {
            let ok =
                s.len() >= 19 && s.is_char_boundary(10) && is_date(&s[..10]) && matches!(s.as_bytes()[10], b'T' | b't');
            if !ok {
                return Err("a date and time, please (YYYY-MM-DDTHH:MM:SSZ)".into());
            }
        }
        _ => {}
    }
    Ok(())
}

fn check_number(p: &Value, x: f64) -> Result<(), String> {
    let g = |k: &str| p.get(k).and_then(Value::as_f64);
    if let Some(m) = g("minimum").filter(|m| x < *m) {
        return Err(format!("at least {}, please", num(m)));
    }
    if let Some(m) = g("maximum").filter(|m| x > *m) {
        return Err(format!("at most {}, please", num(m)));
    }
    if let Some(m) = g("exclusiveMinimum").filter(|m| x <= *m) {
        return Err(format!("more than {}, please", num(m)));
    }
    if let Some(m) = g("exclusiveMaximum").filter(|m| x >= *m) {
        return Err(format!("less than {}, please", num(m)));
    }
    Ok(())
}

fn pick(options: &[(Value, String)], t: &str) -> Option<Value> {
    if let Ok(i) = t.parse::<usize>() {
        if (1..=options.len()).contains(&i) {
            return Some(options[i - 1].0.clone());
        }
    }
    options.iter().find(|(v, l)| plain(v) == t || l.eq_ignore_ascii_case(t)).map(|(v, _)| v.clone())
}

fn parse_answer(kind: &Kind, p: &Value, t: &str) -> Result<Value, String> {
    match kind {
        Kind::Text => {
            check_text(p, t)?;
            Ok(Value::String(t.to_owned()))
        }
        Kind::Bool => match t.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => Ok(json!(true)),
            "n" | "no" | "false" | "0" => Ok(json!(false)),
            _ => Err("yes or no, please".into()),
        },
        Kind::Number { integer } => {
            let v: Value = serde_json::from_str(t).map_err(|_| "a number, please".to_owned())?;
            let x = v.as_f64().ok_or_else(|| "a number, please".to_owned())?;
            check_number(p, x)?;
            if *integer {
                if x.fract() != 0.0 {
                    return Err("a whole number, please".into());
                }
                return Ok(json!(x as i64));
            }
            Ok(v)
        }
        Kind::Choice { options, multi: false } => {
            pick(options, t).ok_or_else(|| format!("a number from 1 to {}, please", options.len()))
        }
        Kind::Choice { options, multi: true } => {
            let mut picked: Vec<Value> = Vec::new();
            for part in t.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let v = pick(options, part).ok_or_else(|| format!("{part:?} is not one of 1 to {}", options.len()))?;
                if !picked.contains(&v) {
                    picked.push(v);
                }
            }
            let n = picked.len() as u64;
            if let Some(min) = p.get("minItems").and_then(Value::as_u64).filter(|m| n < *m) {
                return Err(format!("choose at least {min}"));
            }
            if let Some(max) = p.get("maxItems").and_then(Value::as_u64).filter(|m| n > *m) {
                return Err(format!("choose at most {max}"));
            }
            Ok(Value::Array(picked))
        }
    }
}

fn show_value(kind: &Kind, v: &Value) -> String {
    let label = |x: &Value, options: &[(Value, String)]| {
        options.iter().find(|(o, _)| o == x).map(|(_, l)| l.clone()).unwrap_or_else(|| plain(x))
    };
    match (kind, v) {
        (Kind::Bool, Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
        (Kind::Choice { options, .. }, Value::Array(xs)) => {
            xs.iter().map(|x| label(x, options)).collect::<Vec<_>>().join(", ")
        }
        (Kind::Choice { options, .. }, x) => label(x, options),
        (_, x) => plain(x),
    }
}

fn ask_field(
    name: &str,
    p: &Value,
    required: bool,
    previous: Option<&Value>,
    t: &mut Term<'_>,
) -> std::io::Result<Field> {
    let kind = classify(p);
    let label = p.get("title").and_then(Value::as_str).unwrap_or(name);
    let default = previous.or_else(|| p.get("default"));
    let mut parts: Vec<String> = Vec::new();
    match &kind {
        Kind::Text => {
            let f = p.get("format").and_then(Value::as_str).unwrap_or("text");
            parts.push(f.to_owned());
        }
        Kind::Bool => parts.push("y/n".into()),
        Kind::Number { integer } => parts.push(if *integer { "integer" } else { "number" }.into()),
        Kind::Choice { options, multi } => {
            parts.push(if *multi {
                format!("numbers 1-{} separated by commas", options.len())
            } else {
                format!("1-{}", options.len())
            });
        }
    }
    if let (Some(a), Some(b)) = (p.get("minimum"), p.get("maximum")) {
        parts.push(format!("{a}..{b}"));
    }
    parts.push(if required { "required" } else { "optional" }.into());
    if let Some(d) = default {
        parts.push(format!("default: {}", show_value(&kind, d)));
    }
    if let Some(d) = p.get("description").and_then(Value::as_str) {
        writeln!(t.out, "  {}", dim(d))?;
    }
    if let Kind::Choice { options, .. } = &kind {
        for (i, (_, l)) in options.iter().enumerate() {
            writeln!(t.out, "    {}) {l}", i + 1)?;
        }
    }
    let prompt = format!("  {} ({}): ", bold(label), parts.join(", "));
    loop {
        let Some(line) = t.ask(&prompt)? else {
            return Ok(Field::Cancel);
        };
        let answer = line.trim();
        match answer {
            ":decline" => return Ok(Field::Decline),
            ":cancel" => return Ok(Field::Cancel),
            "" => {
                if let Some(d) = default {
                    return Ok(Field::Value(d.clone()));
                }
                if required {
                    writeln!(t.out, "    a value is required (or type :decline / :cancel)")?;
                    continue;
                }
                return Ok(Field::Skip);
            }
            _ => {}
        }
        match parse_answer(&kind, p, answer) {
            Ok(v) => return Ok(Field::Value(v)),
            Err(msg) => writeln!(t.out, "    {msg}")?,
        }
    }
}

/// Form mode: the server's message, a prompt per field, a review, then accept, decline or
/// cancel.
pub(crate) fn form_elicitation(params: &Value, server: &str, t: &mut Term<'_>) -> std::io::Result<Value> {
    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
    let schema = params.get("requestedSchema").cloned().unwrap_or(json!({}));
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    // The fields in the server's order (the map itself is sorted by name).
    let order = mcp_client::elicit::property_order(&schema);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    writeln!(t.out, "\n{} asks for information:", bold(server))?;
    for l in message.lines() {
        writeln!(t.out, "  {l}")?;
    }
    if !props.is_empty() {
        writeln!(t.out, "{}", dim("  (empty input takes the default; :decline or :cancel refuses; Ctrl-D cancels)"))?;
    }
    let decline = json!({ "action": "decline" });
    let cancel = json!({ "action": "cancel" });
    let mut values = Map::new();
    loop {
        for (name, p) in order.iter().filter_map(|n| props.get(n).map(|p| (n, p))) {
            let prev = values.get(name).cloned();
            match ask_field(name, p, required.contains(&name.as_str()), prev.as_ref(), t)? {
                Field::Value(v) => {
                    values.insert(name.clone(), v);
                }
                Field::Skip => {
                    values.remove(name);
                }
                Field::Decline => return Ok(decline),
                Field::Cancel => return Ok(cancel),
            }
        }
        if !props.is_empty() {
            let shown: Vec<String> = order
                .iter()
                .filter_map(|n| values.get(n).map(|v| format!("{}:{v}", Value::String(n.clone()))))
                .collect();
            writeln!(t.out, "  {} {{{}}}", dim("answer:"), shown.join(","))?;
        }
        let choices = if props.is_empty() {
            "  [a]ccept / [d]ecline / [c]ancel (default: accept): "
        } else {
            "  Send it? [a]ccept / [e]dit / [d]ecline / [c]ancel (default: accept): "
        };
        loop {
            let Some(line) = t.ask(choices)? else {
                return Ok(cancel);
            };
            match line.trim().to_ascii_lowercase().as_str() {
                "" | "a" | "accept" | "y" | "yes" => {
                    return Ok(json!({ "action": "accept", "content": Value::Object(values) }))
                }
                "e" | "edit" if !props.is_empty() => break,
                "d" | "decline" | ":decline" | "n" | "no" => return Ok(decline),
                "c" | "cancel" | ":cancel" => return Ok(cancel),
                _ => writeln!(t.out, "    a, e, d or c, please")?,
            }
        }
    }
}

/// URL mode: show the full URL and its domain, warn about suspicious ones, ask for consent;
/// with consent, open it (only from a real terminal) or let the user open it, then wait for
/// the user to say they are done.
pub(crate) fn url_elicitation(
    params: &Value,
    server: &str,
    can_open: bool,
    t: &mut Term<'_>,
) -> std::io::Result<Value> {
    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
    let raw = params.get("url").and_then(Value::as_str).unwrap_or("");
    writeln!(t.out, "\n{} asks you to open a web page:", bold(server))?;
    for l in message.lines() {
        writeln!(t.out, "  {l}")?;
    }
    writeln!(t.out, "  URL:    {raw}")?;
    let mut web = false;
    match url::Url::parse(raw) {
        Ok(u) => {
            let host = u.host_str().unwrap_or("");
            writeln!(t.out, "  Domain: {}", console::style(host).bold().underlined().for_stderr())?;
            web = matches!(u.scheme(), "https" | "http") && !host.is_empty();
            let local = matches!(host, "localhost" | "127.0.0.1" | "[::1]");
            if !web {
                writeln!(t.out, "  warning: this is not a web (http/https) URL; it will not be opened")?;
            } else if u.scheme() == "http" && !local {
                writeln!(t.out, "  warning: the page is not encrypted (http, not https)")?;
            }
            if host.split('.').any(|l| l.starts_with("xn--")) {
                writeln!(
                    t.out,
                    "  warning: the domain uses Punycode (non-ASCII letters); make sure it is the site you expect"
                )?;
            }
            if !u.username().is_empty() || u.password().is_some() {
                writeln!(t.out, "  warning: the URL contains a user name; the site it leads to is {host}")?;
            }
        }
        Err(e) => writeln!(t.out, "  warning: this is not a valid URL ({e})")?,
    }
    let open_ok = web && can_open;
    let choices = if open_ok {
        "  [o]pen in your browser / open it [y]ourself / [d]ecline / [c]ancel (default: decline): "
    } else if web {
        "  Open it [y]ourself / [d]ecline / [c]ancel (default: decline): "
    } else {
        "  [d]ecline / [c]ancel (default: decline): "
    };
    let opened_here = loop {
        let Some(line) = t.ask(choices)? else {
            return Ok(json!({ "action": "cancel" }));
        };
        match line.trim().to_ascii_lowercase().as_str() {
            "o" | "open" if open_ok => break true,
            "y" | "yes" | "m" | "manual" if web => break false,
            "" | "d" | "decline" | "n" | "no" => return Ok(json!({ "action": "decline" })),
            "c" | "cancel" => return Ok(json!({ "action": "cancel" })),
            _ => writeln!(t.out, "    please pick one of the letters in brackets")?,
        }
    };
    if opened_here {
        if let Err(e) = webbrowser::open(raw) {
            writeln!(t.out, "  could not open a browser ({e}); open the URL yourself:\n  {raw}")?;
        }
    } else {
        writeln!(t.out, "  Open this URL in your browser:\n  {raw}")?;
    }
    let Some(line) = t.ask("  Press Enter when you are done there (or type c to cancel): ")? else {
        return Ok(json!({ "action": "cancel" }));
    };
    if matches!(line.trim().to_ascii_lowercase().as_str(), "c" | "cancel" | ":cancel") {
        return Ok(json!({ "action": "cancel" }));
    }
    Ok(json!({ "action": "accept" }))
}

fn content_text(c: &Value) -> String {
    match c.get("type").and_then(Value::as_str) {
        Some("text") => c.get("text").and_then(Value::as_str).unwrap_or("").to_owned(),
        Some(t @ ("image" | "audio")) => format!("[{t} {}]", c.get("mimeType").and_then(Value::as_str).unwrap_or("?")),
        _ => c.to_string(),
    }
}

/// Sampling: the conversation, then the user's reply (lines up to an empty line). `None`
/// when the reply is empty (declined).
pub(crate) fn sampling_prompt(params: &Value, server: &str, t: &mut Term<'_>) -> std::io::Result<Option<String>> {
    writeln!(t.out, "\n{} asks for a model reply (sampling); you are the model.", bold(server))?;
    if let Some(s) = params.get("systemPrompt").and_then(Value::as_str) {
        writeln!(t.out, "  {}", bold("── system ──"))?;
        for l in s.lines() {
            writeln!(t.out, "  {l}")?;
        }
    }
    for m in params.get("messages").and_then(Value::as_array).into_iter().flatten() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
        writeln!(t.out, "  {}", bold(&format!("── {role} ──")))?;
        let blocks: Vec<Value> = match m.get("content") {
            Some(Value::Array(a)) => a.clone(),
            Some(c) => vec![c.clone()],
            None => Vec::new(),
        };
        for b in blocks {
            for l in content_text(&b).lines() {
                writeln!(t.out, "  {l}")?;
            }
        }
    }
    if let Some(n) = params.get("maxTokens") {
        writeln!(t.out, "  {}", dim(&format!("(maxTokens: {n})")))?;
    }
    writeln!(t.out, "  Type the assistant's reply; finish with an empty line (an empty reply declines):")?;
    let mut lines: Vec<String> = Vec::new();
    loop {
        write!(t.out, "  > ")?;
        t.out.flush()?;
        match t.read_line()? {
            Some(l) if !l.is_empty() => lines.push(l),
            _ => break,
        }
    }
    if lines.is_empty() {
        return Ok(None);
    }
    Ok(Some(lines.join("\n")))
}

#[cfg(test)]
mod tests;
