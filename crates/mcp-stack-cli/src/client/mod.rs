//! The client commands of the `mcp` tool (`discover`, `tools`, `resources`, `prompts`,
//! `complete`, `listen`): target parsing, connecting, running one command, and turning every
//! failure into one clear line on stderr with a non-zero exit code.
//!
//! Exit codes: 0 success; 1 the operation failed (connection, server error, tool error);
//! 2 bad command-line usage; 130 interrupted.

pub(crate) mod args;
pub mod auth;
mod commands;
pub mod doctor;
mod explain;
mod extensions;
mod hints;
mod icons;
mod interact;
mod render;
mod schema_rules;
pub mod servers;
mod show;
mod terminal;

use explain::describe;
use interact::Ui;
use mcp_client::transport::http::HttpTransport;
use mcp_client::transport::stdio::{StdioCommand, StdioTransport};
use mcp_client::{CallOptions, Client, ClientBuilder, ClientError, ServerEra, TransportError};
use render::Stream;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Options shared by every client command.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Machine output: one JSON document on stdout.
    pub json: bool,
    /// Per-request timeout (time to wait for the server's next message).
    pub timeout: Option<Duration>,
    /// `Name: value` headers (HTTP targets only).
    pub headers: Vec<String>,
    /// Roots to declare and answer `roots/list` with.
    pub roots: Vec<String>,
    /// Refuse elicitation and sampling (the capabilities are not declared).
    pub no_input: bool,
    /// Prompt even when stdin is not a terminal (answers read line by line).
    pub interactive: bool,
    /// Ask the server for log messages at this level.
    pub log_level: Option<String>,
    /// Follow redirects to another origin (without the user's headers or credentials).
    pub follow_cross_origin_redirects: bool,
    /// `--config FILE`: where server names are looked up (default: the search order of
    /// [`servers`]).
    pub config: Option<PathBuf>,
    /// `--force-legacy VERSION`: open a legacy session at VERSION without probing.
    pub force_legacy: Option<String>,
    /// `--trust-project-config`: use project config files (`./.mcp.json`...) not approved
    /// with `mcp servers trust`, for this run.
    pub trust_project_config: bool,
    /// `--max-icons`, `--max-icon-bytes`: the bounds of `--save-icons`.
    pub icon_limits: IconLimits,
    /// `--max-list-bytes`, `--max-list-items`: the bounds of a list read in full.
    pub list_bounds: ListBounds,
}

/// The bounds of one paginated list read in full (`mcp tools list`, and with `mcp proxy` each
/// upstream list and each merged one): past either, the command stops with a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListBounds {
    /// Most bytes of items, as JSON, all pages together (default 16 MiB).
    pub max_bytes: usize,
    /// Most items, all pages together (default 100,000).
    pub max_items: usize,
}

impl Default for ListBounds {
    fn default() -> Self {
        Self { max_bytes: mcp_client::DEFAULT_MAX_LIST_BYTES, max_items: mcp_client::DEFAULT_MAX_LIST_ITEMS }
    }
}

/// The bounds of one `--save-icons` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IconLimits {
    /// Icons fetched at most (default 256); the run stops with a message past it.
    pub max_icons: usize,
    /// Bytes saved at most, all icons together (default 64 MiB); the run stops with a
    /// message before the icon that would pass it.
    pub max_bytes: u64,
}

impl Default for IconLimits {
    fn default() -> Self {
        Self { max_icons: 256, max_bytes: 64 * 1024 * 1024 }
    }
}

/// The server to talk to, as given on the command line: the command's positional words (an
/// `http(s)://` URL first, for an HTTP server) and the stdio command after `--`.
#[derive(Debug, Clone, Default)]
pub struct TargetArgs {
    /// Positional words; the first is the URL when no stdio command is given.
    pub positionals: Vec<String>,
    /// The stdio server command and its arguments (after `--`).
    pub command: Vec<String>,
    /// `K=V` environment variables for the stdio server.
    pub env: Vec<String>,
    /// Working directory of the stdio server.
    pub cwd: Option<PathBuf>,
}

/// What `tasks` does with a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskAction {
    /// `tasks get`: show it.
    Get,
    /// `tasks wait`: follow it to its end (answering its questions) and show the result.
    Wait,
    /// `tasks cancel`: cancel it.
    Cancel,
}

/// What `complete` completes.
#[derive(Debug, Clone)]
pub enum CompleteRef {
    /// An argument of the prompt with this name.
    Prompt(String),
    /// A variable of the resource template with this URI (template).
    Resource(String),
}

/// One client command. Positional operands (tool name, URI...) come from
/// [`TargetArgs::positionals`], after the URL if any.
#[derive(Debug, Clone)]
pub enum Action {
    /// `discover`.
    Discover,
    /// `tools list`.
    ToolsList {
        /// `--save-icons DIR`: fetch and save the tools' valid icons.
        save_icons: Option<PathBuf>,
    },
    /// `tools show NAME`.
    ToolsShow {
        /// `--save-icons DIR`: fetch and save the tool's valid icons.
        save_icons: Option<PathBuf>,
    },
    /// `tools call NAME [ARGS_JSON]`.
    ToolsCall {
        /// `--arg key=value` pairs.
        args: Vec<String>,
        /// Where images/audio are saved (default: the current directory).
        out: Option<PathBuf>,
        /// When the server runs the call as a task: print its id and exit.
        detach: bool,
    },
    /// `tasks get|wait|cancel TASK_ID`.
    Task(TaskAction),
    /// `skills list`.
    SkillsList,
    /// `skills get SKILL`.
    SkillsGet,
    /// `skills read SKILL [FILE]`.
    SkillsRead,
    /// `resources list`.
    ResourcesList,
    /// `resources templates`.
    ResourcesTemplates,
    /// `resources read URI`.
    ResourcesRead {
        /// Where blobs are saved.
        out: Option<PathBuf>,
    },
    /// `prompts list`.
    PromptsList,
    /// `prompts get NAME`.
    PromptsGet {
        /// `--arg key=value` pairs.
        args: Vec<String>,
        /// Where images/audio are saved.
        out: Option<PathBuf>,
    },
    /// `complete`.
    Complete {
        /// The prompt or resource template.
        reference: CompleteRef,
        /// The argument being completed.
        argument: String,
        /// What was typed so far.
        value: String,
        /// `K=V` values of other arguments (`context.arguments`).
        context: Vec<String>,
    },
    /// `listen`.
    Listen {
        /// `toolsListChanged`.
        tools: bool,
        /// `promptsListChanged`.
        prompts: bool,
        /// `resourcesListChanged`.
        resources: bool,
        /// `resourceSubscriptions`.
        resource: Vec<String>,
    },
}

impl Action {
    /// Names of the required and optional positional operands.
    fn operands(&self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Action::ToolsCall { .. } => (&["NAME"], &["ARGS_JSON"]),
            Action::ToolsShow { .. } => (&["NAME"], &[]),
            Action::Task(_) => (&["TASK_ID"], &[]),
            Action::SkillsGet => (&["SKILL"], &[]),
            Action::SkillsRead => (&["SKILL"], &["FILE"]),
            Action::ResourcesRead { .. } => (&["URI"], &[]),
            Action::PromptsGet { .. } => (&["NAME"], &[]),
            _ => (&[], &[]),
        }
    }
}

/// Runs one client command and returns the process exit code.
pub async fn run(opts: Options, target: TargetArgs, action: Action) -> ExitCode {
    let json = opts.json;
    // These handle Ctrl-C themselves (a task is cancelled first, then detached).
    let own_interrupt = matches!(action, Action::Listen { .. } | Action::ToolsCall { .. } | Action::Task(_));
    let outcome = if own_interrupt {
        run_inner(opts, target, action).await
    } else {
        tokio::select! {
            r = run_inner(opts, target, action) => r,
            _ = tokio::signal::ctrl_c() => Err(Failure::new("interrupted").exit(130)),
        }
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            f.report(json);
            ExitCode::from(f.exit)
        }
    }
}

/// A failure: one line for stderr, optional hint lines, and the exit code.
#[derive(Debug)]
struct Failure {
    message: String,
    hints: Vec<String>,
    code: Option<i64>,
    data: Option<Value>,
    exit: u8,
}

impl Failure {
    fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), hints: Vec::new(), code: None, data: None, exit: 1 }
    }

    fn usage(message: impl Into<String>) -> Self {
        Self::new(message).exit(2)
    }

    fn exit(mut self, code: u8) -> Self {
        self.exit = code;
        self
    }

    fn hint(mut self, h: impl Into<String>) -> Self {
        self.hints.push(h.into());
        self
    }

    /// The message and its hints, one per line.
    fn text(&self) -> String {
        let mut s = self.message.clone();
        for h in &self.hints {
            s.push_str(&format!("\n  {h}"));
        }
        s
    }

    fn report(&self, json: bool) {
        let s = format!("mcp: {}\n", self.text());
        Stream::Err.write(&s);
        if json {
            let mut e = json!({ "message": self.message });
            if let Some(c) = self.code {
                e["code"] = json!(c);
            }
            if let Some(d) = &self.data {
                e["data"] = d.clone();
            }
            render::print_json(&json!({ "error": e }));
        }
    }
}

/// A server target resolved from the command line, for a long-lived connection of another
/// command (`mcp inspect`, `mcp dev`).
#[derive(Debug, Clone)]
pub struct Resolved(Target);

impl Resolved {
    /// The target from `t` (a URL, a configured NAME, or a stdio command); the error is what
    /// the CLI would print (message and hints).
    pub fn new(opts: &Options, t: TargetArgs) -> Result<Self, String> {
        match resolve_target(opts, t) {
            Ok((target, rest)) if rest.is_empty() => Ok(Self(target)),
            Ok((_, rest)) => Err(format!("unexpected argument `{}`", rest[0])),
            Err(f) => Err(f.text()),
        }
    }

    /// The target for messages (URL without credentials, or the program).
    pub fn describe(&self) -> String {
        self.0.describe()
    }

    /// The URL of an HTTP target.
    pub fn http_url(&self) -> Option<&str> {
        match &self.0 {
            Target::Http { url, .. } => Some(url),
            Target::Stdio { .. } => None,
        }
    }

    /// Connects `b` (its handlers set by the caller) with the options' timeout, version, roots,
    /// headers and stored OAuth tokens.
    pub async fn connect(&self, opts: &Options, b: ClientBuilder) -> Result<Client, String> {
        connect_with(opts, &self.0, b).await.map_err(|f| f.text())
    }
}

/// A resolved target.
#[derive(Debug, Clone)]
enum Target {
    Http { url: String, headers: Vec<(String, String)> },
    Stdio { program: String, args: Vec<String>, env: Vec<(String, String)>, cwd: Option<PathBuf> },
}

impl Target {
    fn describe(&self) -> String {
        match self {
            Target::Http { url, .. } => mcp_client::config::redact_url(url),
            Target::Stdio { program, .. } => format!("`{program}`"),
        }
    }
}

fn is_http_url(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l.starts_with("http://") || l.starts_with("https://")
}

fn resolve_target(opts: &Options, t: TargetArgs) -> Result<(Target, Vec<String>), Failure> {
    let mut pos = t.positionals;
    let headers =
        opts.headers.iter().map(|h| args::parse_header(h)).collect::<Result<Vec<_>, _>>().map_err(Failure::usage)?;
    if !t.command.is_empty() {
        if !headers.is_empty() {
            return Err(Failure::usage("--header applies to HTTP targets only"));
        }
        let mut env = Vec::new();
        for e in &t.env {
            let (k, v) = args::split_pair("--env", e).map_err(Failure::usage)?;
            env.push((k.to_owned(), v.to_owned()));
        }
        let mut cmd = t.command;
        let program = cmd.remove(0);
        return Ok((Target::Stdio { program, args: cmd, env, cwd: t.cwd }, pos));
    }
    match pos.first() {
        Some(u) if is_http_url(u) => {
            let url = pos.remove(0);
            match url::Url::parse(&url) {
                Ok(p) if p.host_str().is_some_and(|h| !h.is_empty()) => {}
                Ok(_) => return Err(Failure::usage(format!("{url} has no host"))),
                Err(e) => return Err(Failure::usage(format!("{url} is not a valid URL: {e}"))),
            }
            if !t.env.is_empty() || t.cwd.is_some() {
                return Err(Failure::usage("--env and --cwd apply to stdio targets (`-- COMMAND ...`) only"));
            }
            Ok((Target::Http { url, headers }, pos))
        }
        Some(u) if u.contains("://") => {
            Err(Failure::usage(format!("{u} is not an http(s):// URL; for a stdio server pass `-- COMMAND [ARGS...]`")))
        }
        Some(_) => {
            let name = pos.remove(0);
            let target = servers::named_target(opts, &name, headers, &t.env, t.cwd);
            // `mcp tools call echo URL`: the server comes first (a configured name wins).
            let target = match (target, pos.iter().position(|p| is_http_url(p))) {
                (Err(f), Some(i)) => {
                    let mut line = pos;
                    let url = line.remove(i);
                    line.splice(0..0, [url, name]);
                    return Err(f.hint(format!("the server comes first: did you mean `{}`?", line.join(" "))));
                }
                (target, _) => target,
            };
            Ok((target.map_err(|f| hints::scheme_less(&name, f))?, pos))
        }
        None => Err(Failure::usage(
            "no server given: pass an http(s):// URL, or `-- COMMAND [ARGS...]` to start a stdio server",
        )),
    }
}

fn bind_operands(action: &Action, pos: Vec<String>) -> Result<Vec<String>, Failure> {
    let (req, opt) = action.operands();
    if pos.len() < req.len() {
        return Err(Failure::usage(format!("missing {}", req[pos.len()..].join(" "))));
    }
    if pos.len() > req.len() + opt.len() {
        return Err(Failure::usage(format!("unexpected argument `{}`", pos[req.len() + opt.len()])));
    }
    Ok(pos)
}

use mcp_doctor::program_exists;

fn http_transport(url: &str, headers: &[(String, String)], opts: &Options) -> Result<HttpTransport, Failure> {
    let timeout = opts.timeout;
    let mut b = HttpTransport::builder(url).follow_cross_origin_redirects(opts.follow_cross_origin_redirects);
    for (k, v) in headers {
        b = b.header(k.clone(), v.clone());
    }
    // Stored OAuth tokens (`mcp auth login`), unless an Authorization header is given.
    if !headers.iter().any(|(k, _)| k == "authorization") {
        if let Some(p) = auth::provider_for(url) {
            b = b.auth(p);
        }
    }
    if let Some(t) = timeout {
        b = b.connect_timeout(t);
    }
    b.build().map_err(|e| match e {
        TransportError::Connect(m, _) => Failure::usage(format!("{}: {m}", mcp_client::config::redact_url(url))),
        other => Failure::usage(format!("{}: {other}", mcp_client::config::redact_url(url))),
    })
}

async fn connect(opts: &Options, target: &Target, ui: Arc<Ui>) -> Result<Client, Failure> {
    // The CLI follows tasks (spinner, Ctrl-C cancels), so it declares the extension.
    let mut b = ClientBuilder::new("mcp-cli", env!("CARGO_PKG_VERSION")).tasks(true);
    // Log messages no call takes (a legacy server's, between or across calls) are shown too;
    // `--log-level` also reaches a legacy server, as `logging/setLevel`.
    let l = ui.clone();
    b = b.on_log(move |p| l.log(p));
    if let Some(level) = opts.log_level.as_deref().and_then(level) {
        b = b.log_level(level);
    }
    if !opts.no_input {
        let e = ui.clone();
        // The prompts show the questions as the server sent them: the raw handlers.
        b = b.on_elicitation_raw(mcp_client::ElicitationModes::FORM_AND_URL, move |p| e.clone().elicit(p));
        let s = ui.clone();
        b = b.on_sampling_raw(mcp_client::Sampling::Text, move |p| s.clone().sample(p));
    }
    connect_with(opts, target, b).await
}

/// Connects `b` (its handlers set) to `target` with the options' timeout, version and roots.
async fn connect_with(opts: &Options, target: &Target, mut b: ClientBuilder) -> Result<Client, Failure> {
    b = b.max_list(opts.list_bounds.max_bytes, opts.list_bounds.max_items);
    if let Some(t) = opts.timeout {
        b = b.timeout(t).probe_timeout(t).connect_timeout(t);
    }
    if let Some(v) = &opts.force_legacy {
        b = b.force_legacy(&hints::legacy_version(v)?);
    }
    if !opts.roots.is_empty() {
        let roots = opts.roots.iter().map(|r| args::root(r)).collect::<Result<Vec<_>, _>>().map_err(Failure::usage)?;
        b = b.roots(roots);
    }
    let r = match target {
        Target::Http { url, headers } => b.connect(http_transport(url, headers, opts)?).await,
        Target::Stdio { program, args, env, cwd } => {
            if !program_exists(program, env, cwd.as_deref()) {
                return Err(Failure::new(format!("command not found: {program}")));
            }
            let mut cmd = StdioCommand::new(program.clone()).args(args.iter().cloned()).envs(env.iter().cloned());
            if let Some(d) = cwd {
                cmd = cmd.cwd(d.clone());
            }
            let t =
                StdioTransport::spawn(cmd).map_err(|e| describe(e.into(), target, None, "server/discover", opts))?;
            b.connect(t).await
        }
    };
    match r {
        Ok(c) => Ok(c),
        Err(e) => Err(explain::connect_failure(e, target, opts).await),
    }
}

/// The raw JSON of typed list items, for the tables and `--json` (output as the server sent it).
fn raw<T>(items: Vec<mcp_client::Typed<T>>) -> Vec<Value> {
    items.into_iter().map(mcp_client::Typed::into_raw).collect()
}

/// `--log-level` as a level (checked before the connection).
fn level(l: &str) -> Option<mcp::protocol::types::LoggingLevel> {
    serde_json::from_value(Value::from(l)).ok()
}

/// The server's display name, from `server/discover` or `initialize`.
fn server_name(client: &Client) -> Option<String> {
    let info = match client.era()? {
        ServerEra::Modern { discover, .. } => {
            discover.raw().pointer("/_meta/io.modelcontextprotocol~1serverInfo").cloned()
        }
        ServerEra::Legacy { initialize, .. } => initialize.get("serverInfo").cloned(),
    }?;
    info.get("title").or_else(|| info.get("name")).and_then(Value::as_str).map(|s| format!("Server \"{s}\""))
}

struct Ctx<'a> {
    client: &'a Client,
    target: &'a Target,
    opts: &'a Options,
    ui: &'a Arc<Ui>,
}

impl Ctx<'_> {
    fn fail(&self, e: ClientError, method: &str) -> Failure {
        describe(e, self.target, self.client.era().as_ref(), method, self.opts)
    }

    fn call_options(&self) -> CallOptions {
        let p = self.ui.clone();
        let l = self.ui.clone();
        CallOptions {
            on_progress: Some(Arc::new(move |v: &Value| p.progress(v))),
            on_log: Some(Arc::new(move |v: &Value| l.log(v))),
            log_level: self.opts.log_level.as_deref().and_then(level),
            timeout: None,
        }
    }
}

async fn run_inner(opts: Options, target: TargetArgs, action: Action) -> Result<u8, Failure> {
    let (target, pos) = resolve_target(&opts, target)?;
    let pos = bind_operands(&action, pos)?;
    if let Some(l) = &opts.log_level {
        if !mcp::protocol::meta::LOG_LEVELS.contains(&l.as_str()) {
            return Err(Failure::usage(format!(
                "--log-level must be one of {}",
                mcp::protocol::meta::LOG_LEVELS.join(", ")
            )));
        }
    }
    let ui = Arc::new(Ui::new(!opts.no_input, opts.interactive));
    let client = connect(&opts, &target, ui.clone()).await?;
    ui.set_server(server_name(&client).unwrap_or_else(|| format!("The server {}", target.describe())));
    let ctx = Ctx { client: &client, target: &target, opts: &opts, ui: &ui };
    let r = execute(&ctx, action, pos).await;
    ui.finish_progress();
    client.close().await;
    r
}

async fn execute(ctx: &Ctx<'_>, action: Action, pos: Vec<String>) -> Result<u8, Failure> {
    let json = ctx.opts.json;
    let c = ctx.client;
    match action {
        Action::Discover => {
            let (era, version, result) = match c.era() {
                Some(ServerEra::Modern { version, discover }) => ("modern", version, discover.into_raw()),
                Some(ServerEra::Legacy { version, initialize }) => ("legacy", version, initialize),
                None => {
                    let d = c.discover().await.map_err(|e| ctx.fail(e, "server/discover"))?;
                    ("unknown", String::new(), d.into_raw())
                }
            };
            if json {
                render::print_json(&result);
            } else {
                Stream::Out.write(&render::discover(era, &version, &result));
            }
            Ok(0)
        }
        Action::ToolsList { save_icons } => {
            let tools = raw(c.list_tools().await.map_err(|e| ctx.fail(e, "tools/list"))?);
            if !json {
                Stream::Out.write(&render::tools_table(&tools));
            }
            let saved = match &save_icons {
                Some(dir) => Some(icons::save_icons(ctx.target, &tools, dir, json, ctx.opts.icon_limits).await),
                None => None,
            };
            if json {
                let mut doc = json!({ "tools": tools });
                if let Some(saved) = saved {
                    doc["icons"] = Value::Array(saved);
                }
                render::print_json(&doc);
            }
            Ok(0)
        }
        Action::ToolsShow { save_icons } => show::tools_show(ctx, &pos[0], save_icons.as_deref()).await,
        Action::ToolsCall { args, out, detach } => {
            commands::tools_call(ctx, &pos[0], pos.get(1).map(String::as_str), &args, out, detach).await
        }
        Action::Task(t) => extensions::task(ctx, t, &pos[0]).await,
        Action::SkillsList => extensions::skills_list(ctx).await,
        Action::SkillsGet => extensions::skills_get(ctx, &pos[0]).await,
        Action::SkillsRead => extensions::skills_read(ctx, &pos[0], pos.get(1).map(String::as_str)).await,
        Action::ResourcesList => {
            let items = raw(c.list_resources().await.map_err(|e| ctx.fail(e, "resources/list"))?);
            if json {
                render::print_json(&json!({ "resources": items }));
            } else {
                Stream::Out.write(&render::resources_table(&items));
            }
            Ok(0)
        }
        Action::ResourcesTemplates => {
            let items = raw(c.list_resource_templates().await.map_err(|e| ctx.fail(e, "resources/templates/list"))?);
            if json {
                render::print_json(&json!({ "resourceTemplates": items }));
            } else {
                Stream::Out.write(&render::templates_table(&items));
            }
            Ok(0)
        }
        Action::ResourcesRead { out } => {
            let uri = &pos[0];
            let result = c.read_resource(uri).await.map_err(|e| ctx.fail(e, "resources/read"))?.into_raw();
            if json {
                render::print_json(&result);
                return Ok(0);
            }
            let contents = result.get("contents").and_then(Value::as_array).cloned().unwrap_or_default();
            let dir = out.unwrap_or_else(|| PathBuf::from("."));
            let stem =
                uri.trim_end_matches('/').rsplit(['/', ':']).next().filter(|s| !s.is_empty()).unwrap_or("resource");
            let mut r = render::ContentRenderer { out_dir: &dir, stem, saved: 0 };
            for item in &contents {
                if contents.len() == 1 {
                    if let Some(t) = item.get("text").and_then(Value::as_str) {
                        Stream::Out.write(t);
                        if !t.ends_with('\n') {
                            Stream::Out.write("\n");
                        }
                        continue;
                    }
                    if let Some(b) = item.get("blob").and_then(Value::as_str) {
                        let mime = item.get("mimeType").and_then(Value::as_str);
                        let p = render::save_base64(&dir, stem, mime, b).map_err(Failure::new)?;
                        Stream::Out.line(&format!("saved {} ({}) to {}", uri, mime.unwrap_or("binary"), p.display()));
                        continue;
                    }
                }
                Stream::Out.write(&r.embedded(item));
            }
            if contents.is_empty() {
                Stream::Err.line("(the resource has no contents)");
            }
            Ok(0)
        }
        Action::PromptsList => {
            let items = raw(c.list_prompts().await.map_err(|e| ctx.fail(e, "prompts/list"))?);
            if json {
                render::print_json(&json!({ "prompts": items }));
            } else {
                Stream::Out.write(&render::prompts_table(&items));
            }
            Ok(0)
        }
        Action::PromptsGet { args, out } => {
            let name = &pos[0];
            let arguments = args::prompt_arguments(&args).map_err(Failure::usage)?;
            let result = match c.get_prompt(name, arguments).await {
                Ok(r) => r.into_raw(),
                Err(e) => return Err(commands::prompt_failure(ctx, e, name).await),
            };
            if json {
                render::print_json(&result);
            } else {
                let dir = out.unwrap_or_else(|| PathBuf::from("."));
                let mut r = render::ContentRenderer { out_dir: &dir, stem: name, saved: 0 };
                Stream::Out.write(&render::prompt_result(&result, &mut r));
            }
            Ok(0)
        }
        Action::Complete { reference, argument, value, context } => {
            use mcp::protocol::types::{
                CompleteContext, CompleteReference, PromptReference, ResourceTemplateReference,
            };
            let reference = match reference {
                CompleteRef::Prompt(name) => CompleteReference::Prompt(PromptReference { name, ..Default::default() }),
                CompleteRef::Resource(uri) => {
                    CompleteReference::ResourceTemplate(ResourceTemplateReference { uri, ..Default::default() })
                }
            };
            let context = if context.is_empty() {
                None
            } else {
                let given = args::prompt_arguments(&context).map_err(Failure::usage)?;
                let text = |v: Value| v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string());
                let arguments = given.into_iter().map(|(k, v)| (k, text(v))).collect();
                Some(CompleteContext { arguments: Some(arguments) })
            };
            let result = c
                .complete(reference, &argument, &value, context)
                .await
                .map_err(|e| ctx.fail(e, "completion/complete"))?;
            if json {
                render::print_json(result.raw());
                return Ok(0);
            }
            let comp = &result.completion;
            let values = &comp.values;
            for v in values {
                Stream::Out.line(v);
            }
            if values.is_empty() {
                Stream::Err.line("(no completions)");
            }
            let total = comp.total;
            let more = comp.has_more == Some(true);
            if more || total.is_some_and(|t| t as usize > values.len()) {
                Stream::Err.line(&format!(
                    "({} of {} shown)",
                    values.len(),
                    total.map(|t| t.to_string()).unwrap_or_else(|| "more".into())
                ));
            }
            Ok(0)
        }
        Action::Listen { tools, prompts, resources, resource } => {
            commands::listen(ctx, tools, prompts, resources, resource).await
        }
    }
}

#[cfg(test)]
mod tests;
