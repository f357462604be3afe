//! `mcp`: the Model Context Protocol command-line tool.

mod malloc;

use clap::{Args, Parser, Subcommand};
use mcp_cli::client::{Action, CompleteRef, Options, TargetArgs, TaskAction};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

const TARGET_HELP: &str =
    "TARGET is an http(s):// URL or a configured server NAME (see `mcp servers list`) given first,\n\
    or a stdio server command given last after `--`:\n  \
    mcp tools list NAME --config .mcp.json\n  \
    mcp tools list http://127.0.0.1:3000/mcp\n  \
    mcp tools call echo '{\"text\":\"hi\"}' -- mcp serve everything --stdio";

#[derive(Parser)]
#[command(
    name = "mcp",
    version,
    about = "Model Context Protocol (2026-07-28) command-line tool",
    after_help = TARGET_HELP
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Options of every client command.
#[derive(Args, Default)]
#[command(next_help_heading = "Client options")]
struct Global {
    /// Machine output: exactly one JSON document on stdout (the raw result).
    #[arg(long, global = true)]
    json: bool,
    /// Seconds a request may wait for the server's next message (default 60).
    #[arg(long, global = true, value_name = "SECS")]
    timeout: Option<f64>,
    /// Extra HTTP header, 'Name: value' (repeatable; HTTP targets only).
    #[arg(long = "header", global = true, value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Declare the roots capability and answer roots/list with this root (repeatable).
    #[arg(long = "root", global = true, value_name = "URI")]
    roots: Vec<String>,
    /// Refuse elicitation and sampling (their capabilities are not declared).
    #[arg(long, global = true)]
    no_input: bool,
    /// Ask elicitation/sampling questions even when stdin is not a terminal (answers are read line by line).
    #[arg(long, global = true, conflicts_with = "no_input")]
    interactive: bool,
    /// Ask the server for log messages at this level (shown on stderr; a legacy server is sent logging/setLevel).
    #[arg(long, global = true, value_name = "LEVEL")]
    log_level: Option<String>,
    /// Follow a 307/308 redirect to another origin (refused by default). Custom headers,
    /// Authorization and stored tokens are never sent to the other origin.
    #[arg(long, global = true)]
    follow_cross_origin_redirects: bool,
    /// Server config file (`mcpServers` or VS Code `servers`) for NAME targets (default: ./.mcp.json,
    /// ./mcp.json, ./.vscode/mcp.json, then the user's config dir, e.g. ~/.config/mcp/mcp.json).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Skip era detection and open a legacy `initialize` session at this protocol version
    /// (2025-11-25 or older), for servers that mishandle the modern probe.
    #[arg(long, global = true, value_name = "VERSION")]
    force_legacy: Option<String>,
    /// Use project config files (./.mcp.json, ./mcp.json, ./.vscode/mcp.json) not approved
    /// with `mcp servers trust`, for this run (also MCP_TRUST_PROJECT_CONFIG=1).
    #[arg(long, global = true)]
    trust_project_config: bool,
    /// With --save-icons: fetch at most N icons, then stop with a message.
    #[arg(long, global = true, value_name = "N", default_value_t = 256)]
    max_icons: usize,
    /// With --save-icons: save at most this many bytes in all, then stop with a message.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    max_icon_bytes: u64,
    /// Most bytes (JSON) of one list read in full, all pages together (`mcp tools list`; with
    /// `mcp proxy`, each upstream's list and each merged one): past it, an error (a gateway
    /// leaves an upstream past it out of the merged list instead).
    #[arg(long, global = true, value_name = "BYTES", default_value_t = mcp_client::DEFAULT_MAX_LIST_BYTES)]
    max_list_bytes: usize,
    /// Most items of one list read in full, all pages together (as --max-list-bytes).
    #[arg(long, global = true, value_name = "N", default_value_t = mcp_client::DEFAULT_MAX_LIST_ITEMS)]
    max_list_items: usize,
    /// OpenTelemetry export: --otlp-endpoint.
    #[command(flatten)]
    telemetry: mcp_cli::telemetry::TelemetryArgs,
}

/// Where the server is: a URL (first positional) or a stdio command (after `--`).
#[derive(Args)]
struct Target {
    /// Environment variable for a stdio server (repeatable).
    #[arg(long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// Working directory of a stdio server.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The stdio server command and its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// The flags of `mcp serve` (and only those: see [`parse_cli`]).
#[derive(Args)]
struct ServeArgs {
    /// Which server (`everything`: every conformance fixture plus demo tools).
    #[arg(value_parser = ["everything"])]
    name: String,
    /// Serve Streamable HTTP on this address (path /mcp), e.g. 127.0.0.1:3000.
    #[arg(long, conflicts_with = "stdio")]
    http: Option<SocketAddr>,
    /// Serve on stdin/stdout.
    #[arg(long)]
    stdio: bool,
    /// Extra Host names to accept (DNS-rebinding protection allows loopback names only by default).
    #[arg(long = "allow-host")]
    allow_hosts: Vec<String>,
    /// Serve the skills in this folder (each subfolder with a SKILL.md) instead of the demo skills.
    #[arg(long, value_name = "DIR")]
    skills: Option<PathBuf>,
    /// OAuth protection (HTTP only): --auth-issuer, --auth-audience, --auth-jwks, --auth-scopes.
    #[command(flatten)]
    auth: mcp_cli::ServeAuth,
    /// Many instances of one service: --redis, --state-secret-file.
    #[command(flatten)]
    shared: mcp_cli::ServeShared,
    /// Transport limits (all on by default).
    #[command(flatten)]
    limits: mcp_cli::ServeLimits,
    /// OpenTelemetry export: --otlp-endpoint.
    #[command(flatten)]
    telemetry: mcp_cli::telemetry::TelemetryArgs,
}

/// `mcp serve` parsed on its own, so that its help lists the server's flags and none of the
/// client options (which are global on [`Cli`]).
#[derive(Parser)]
#[command(name = "mcp serve", bin_name = "mcp serve", version, about = "Run a built-in MCP server.")]
struct ServeCli {
    #[command(flatten)]
    args: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run a built-in MCP server.
    Serve(Box<ServeArgs>),
    /// Serve an upstream server (URL, or stdio command after `--`; any era) as a dual-era
    /// server of our own, over Streamable HTTP (--http ADDR) or stdio (--stdio).
    #[command(override_usage = "mcp proxy (--http ADDR | --stdio) [OPTIONS] URL\n       \
        mcp proxy (--http ADDR | --stdio) [OPTIONS] -- COMMAND...")]
    Proxy(Box<mcp_cli::proxy::ProxyArgs>),
    /// Log in to an OAuth-protected HTTP server, log out, or show the stored authorization.
    #[command(subcommand)]
    Auth(mcp_cli::client::auth::AuthCmd),
    /// Show the servers configured in config files (what NAME targets resolve to).
    #[command(subcommand)]
    Servers(ServersCmd),
    /// Open a web inspector for a server: tools with forms, resources, prompts, tasks, skills,
    /// listen, the raw traffic, and MCP Apps rendered as a host would (loopback only).
    #[command(override_usage = "mcp inspect [OPTIONS] URL|NAME\n       mcp inspect [OPTIONS] -- COMMAND...")]
    Inspect {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        /// Port of the page on 127.0.0.1 (default: any free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Port of the MCP Apps sandbox on [::1] (127.0.0.1 without IPv6 loopback; default: any
        /// free one).
        #[arg(long, default_value_t = 0)]
        sandbox_port: u16,
        /// MiB of events queued for a page that reads slowly; past it the oldest are dropped and
        /// the page shows how many.
        #[arg(long = "page-backlog-mib", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
        backlog: u32,
        /// Do not open a browser (print the URL only).
        #[arg(long)]
        no_open: bool,
        #[command(flatten)]
        target: Target,
    },
    /// The inspector on a server under development: restarts the server when files under the
    /// current folder change (not target/ or dot-folders) and keeps the page connected.
    #[command(override_usage = "mcp dev [OPTIONS] -- COMMAND...\n       mcp dev [OPTIONS] --cmd 'COMMAND ARGS' URL")]
    Dev {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        /// For an HTTP server at URL: the command that runs it (split on spaces).
        #[arg(long, value_name = "COMMAND")]
        cmd: Option<String>,
        /// The folder to watch (default: the current one).
        #[arg(long, value_name = "DIR")]
        watch: Option<PathBuf>,
        /// Port of the page on 127.0.0.1 (default: any free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Do not open a browser (print the URL only).
        #[arg(long)]
        no_open: bool,
        #[command(flatten)]
        target: Target,
    },
    /// Add a server to an MCP host's configuration (Claude Desktop, Claude Code, Cursor, VS
    /// Code, Gemini CLI, or a plain mcp.json), keeping everything else in the file; the old
    /// file is saved as FILE.bak.
    #[command(override_usage = "mcp install [OPTIONS] CLIENT URL\n       mcp install [OPTIONS] CLIENT -- COMMAND...")]
    Install {
        /// The host to configure.
        #[arg(value_enum)]
        client: mcp_cli::install::Host,
        #[arg(value_name = "URL")]
        url: Option<String>,
        /// The server's name in the file (default: the URL's host or the program's name).
        #[arg(long)]
        name: Option<String>,
        /// The project's file (in the current folder) instead of the user's.
        #[arg(long)]
        project: bool,
        /// Write this file instead of the host's own.
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// Replace a server of the same name.
        #[arg(long)]
        force: bool,
        /// Print the file as it would be; write nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        target: Target,
    },
    /// Show a server's era and protocol version, identity, capabilities and instructions.
    #[command(override_usage = "mcp discover [OPTIONS] URL\n       mcp discover [OPTIONS] -- COMMAND...")]
    Discover {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Check every step of connecting to a server (DNS, TCP, TLS, era, headers, auth, token)
    /// and print a fix for each failure; exit code 1 if a step failed.
    #[command(override_usage = "mcp doctor [OPTIONS] URL\n       mcp doctor [OPTIONS] -- COMMAND...")]
    Doctor {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// List or call tools.
    #[command(subcommand)]
    Tools(ToolsCmd),
    /// List, or read, resources and resource templates.
    #[command(subcommand)]
    Resources(ResourcesCmd),
    /// List or get prompts.
    #[command(subcommand)]
    Prompts(PromptsCmd),
    /// Look at, wait for, or cancel a task (the tasks extension).
    #[command(subcommand)]
    Tasks(TasksCmd),
    /// List a server's skills, show one, or load one and read its files (verified).
    #[command(subcommand)]
    Skills(SkillsCmd),
    /// Ask for completions of a prompt or resource template argument.
    #[command(
        override_usage = "mcp complete [OPTIONS] URL (--prompt NAME | --resource URI) --arg NAME [--value PREFIX]\n       \
        mcp complete [OPTIONS] (--prompt NAME | --resource URI) --arg NAME [--value PREFIX] -- COMMAND..."
    )]
    Complete {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        /// Complete an argument of this prompt.
        #[arg(long, value_name = "NAME", required_unless_present = "resource", conflicts_with = "resource")]
        prompt: Option<String>,
        /// Complete a variable of this resource template.
        #[arg(long, value_name = "URI")]
        resource: Option<String>,
        /// The argument to complete.
        #[arg(long = "arg", value_name = "NAME")]
        argument: String,
        /// What was typed so far.
        #[arg(long, value_name = "PREFIX", default_value = "")]
        value: String,
        /// Values of other arguments already chosen (repeatable).
        #[arg(long = "context", value_name = "K=V")]
        context: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Print change notifications until Ctrl-C or until the server ends the subscription
    /// (all list changes when no filter is given).
    #[command(override_usage = "mcp listen [OPTIONS] URL\n       mcp listen [OPTIONS] -- COMMAND...")]
    Listen {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        /// Tool list changes.
        #[arg(long)]
        tools: bool,
        /// Prompt list changes.
        #[arg(long)]
        prompts: bool,
        /// Resource list changes.
        #[arg(long)]
        resources: bool,
        /// Updates of this resource (repeatable).
        #[arg(long = "resource", value_name = "URI")]
        resource: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
}

#[derive(Subcommand)]
enum ServersCmd {
    /// List each configured server: name, transport, file, command or URL (as written:
    /// nothing expanded, secrets never shown); project files not approved are marked untrusted.
    List,
    /// Approve a project config file (default: those of the current folder) after reviewing
    /// it; remembered until the file changes.
    Trust {
        /// The file (./.mcp.json, ./mcp.json or ./.vscode/mcp.json of some folder).
        file: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ToolsCmd {
    /// List the server's tools.
    #[command(override_usage = "mcp tools list [OPTIONS] URL\n       mcp tools list [OPTIONS] -- COMMAND...")]
    List {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        /// Fetch each tool's icons by the spec's icon rules and save the valid ones in DIR.
        #[arg(long = "save-icons", value_name = "DIR")]
        save_icons: Option<PathBuf>,
        #[command(flatten)]
        target: Target,
    },
    /// Show a tool: title, description, annotations, input and output schemas (--json: its definition).
    #[command(
        override_usage = "mcp tools show [OPTIONS] URL NAME\n       mcp tools show [OPTIONS] NAME -- COMMAND..."
    )]
    Show {
        /// [URL] NAME
        #[arg(value_name = "ARGS")]
        pos: Vec<String>,
        /// Fetch the tool's icons (https: or data:, same origin, PNG/JPEG/WebP checked by
        /// their bytes) and save the valid ones in DIR; refused ones are listed with a reason.
        #[arg(long = "save-icons", value_name = "DIR")]
        save_icons: Option<PathBuf>,
        #[command(flatten)]
        target: Target,
    },
    /// Call a tool; arguments from a JSON object and/or --arg pairs.
    #[command(override_usage = "mcp tools call [OPTIONS] URL NAME [ARGS_JSON]\n       \
        mcp tools call [OPTIONS] NAME [ARGS_JSON] -- COMMAND...")]
    Call {
        /// [URL] NAME [ARGS_JSON]
        #[arg(value_name = "ARGS")]
        pos: Vec<String>,
        /// Argument `key=value`; the value is JSON if it parses (and the tool's schema allows), else a string;
        /// a dotted key (`address.city=Paris`) sets a nested field; keys the schema does not know are refused (repeatable).
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
        /// Directory for images and audio the tool returns (default: current directory).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// If the server runs the call as a task, print the task id and exit (see `mcp tasks`).
        #[arg(long)]
        detach: bool,
        #[command(flatten)]
        target: Target,
    },
}

#[derive(Subcommand)]
enum TasksCmd {
    /// Show a task's status (and whether its result is ready).
    #[command(
        override_usage = "mcp tasks get [OPTIONS] URL TASK_ID\n       mcp tasks get [OPTIONS] TASK_ID -- COMMAND..."
    )]
    Get {
        /// [URL] TASK_ID
        #[arg(value_name = "ARGS")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Follow a task to its end, answering its questions, and print its result.
    #[command(
        override_usage = "mcp tasks wait [OPTIONS] URL TASK_ID\n       mcp tasks wait [OPTIONS] TASK_ID -- COMMAND..."
    )]
    Wait {
        /// [URL] TASK_ID
        #[arg(value_name = "ARGS")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Cancel a task.
    #[command(
        override_usage = "mcp tasks cancel [OPTIONS] URL TASK_ID\n       mcp tasks cancel [OPTIONS] TASK_ID -- COMMAND..."
    )]
    Cancel {
        /// [URL] TASK_ID
        #[arg(value_name = "ARGS")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
}

#[derive(Subcommand)]
enum SkillsCmd {
    /// List the server's skills (nothing is read).
    #[command(override_usage = "mcp skills list [OPTIONS] URL\n       mcp skills list [OPTIONS] -- COMMAND...")]
    List {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Show a skill's listing: frontmatter, files, digests (by name or SKILL.md URI).
    #[command(
        override_usage = "mcp skills get [OPTIONS] URL SKILL\n       mcp skills get [OPTIONS] SKILL -- COMMAND..."
    )]
    Get {
        /// [URL] SKILL
        #[arg(value_name = "ARGS")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Load a skill and print its SKILL.md, or one of its files (FILE relative to the skill);
    /// content that does not match the listing (size, digest, frontmatter) is refused.
    #[command(
        override_usage = "mcp skills read [OPTIONS] URL SKILL [FILE]\n       mcp skills read [OPTIONS] SKILL [FILE] -- COMMAND..."
    )]
    Read {
        /// [URL] SKILL [FILE]
        #[arg(value_name = "ARGS")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
}

#[derive(Subcommand)]
enum ResourcesCmd {
    /// List the server's resources.
    #[command(override_usage = "mcp resources list [OPTIONS] URL\n       mcp resources list [OPTIONS] -- COMMAND...")]
    List {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// List the server's resource templates.
    #[command(
        override_usage = "mcp resources templates [OPTIONS] URL\n       mcp resources templates [OPTIONS] -- COMMAND..."
    )]
    Templates {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Read a resource: text is printed, binary content saved to a file.
    #[command(
        override_usage = "mcp resources read [OPTIONS] URL URI\n       mcp resources read [OPTIONS] URI -- COMMAND..."
    )]
    Read {
        /// [URL] URI
        #[arg(value_name = "ARGS")]
        pos: Vec<String>,
        /// Directory for binary content (default: current directory).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        #[command(flatten)]
        target: Target,
    },
}

#[derive(Subcommand)]
enum PromptsCmd {
    /// List the server's prompts (`*` marks required arguments).
    #[command(override_usage = "mcp prompts list [OPTIONS] URL\n       mcp prompts list [OPTIONS] -- COMMAND...")]
    List {
        #[arg(value_name = "URL")]
        pos: Vec<String>,
        #[command(flatten)]
        target: Target,
    },
    /// Get a prompt's messages.
    #[command(
        override_usage = "mcp prompts get [OPTIONS] URL NAME\n       mcp prompts get [OPTIONS] NAME -- COMMAND..."
    )]
    Get {
        /// [URL] NAME
        #[arg(value_name = "ARGS")]
        pos: Vec<String>,
        /// Argument `key=value` (repeatable).
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
        /// Directory for images and audio in the messages (default: current directory).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        #[command(flatten)]
        target: Target,
    },
}

fn target(pos: Vec<String>, t: Target) -> TargetArgs {
    TargetArgs { positionals: pos, command: t.command, env: t.env, cwd: t.cwd }
}

/// The target and action of a client command.
fn client_command(c: Command) -> (TargetArgs, Action) {
    match c {
        Command::Discover { pos, target: t } => (target(pos, t), Action::Discover),
        Command::Tools(ToolsCmd::List { pos, save_icons, target: t }) => {
            (target(pos, t), Action::ToolsList { save_icons })
        }
        Command::Tools(ToolsCmd::Show { pos, save_icons, target: t }) => {
            (target(pos, t), Action::ToolsShow { save_icons })
        }
        Command::Tools(ToolsCmd::Call { pos, args, out, detach, target: t }) => {
            (target(pos, t), Action::ToolsCall { args, out, detach })
        }
        Command::Tasks(TasksCmd::Get { pos, target: t }) => (target(pos, t), Action::Task(TaskAction::Get)),
        Command::Tasks(TasksCmd::Wait { pos, target: t }) => (target(pos, t), Action::Task(TaskAction::Wait)),
        Command::Tasks(TasksCmd::Cancel { pos, target: t }) => (target(pos, t), Action::Task(TaskAction::Cancel)),
        Command::Skills(SkillsCmd::List { pos, target: t }) => (target(pos, t), Action::SkillsList),
        Command::Skills(SkillsCmd::Get { pos, target: t }) => (target(pos, t), Action::SkillsGet),
        Command::Skills(SkillsCmd::Read { pos, target: t }) => (target(pos, t), Action::SkillsRead),
        Command::Resources(ResourcesCmd::List { pos, target: t }) => (target(pos, t), Action::ResourcesList),
        Command::Resources(ResourcesCmd::Templates { pos, target: t }) => (target(pos, t), Action::ResourcesTemplates),
        Command::Resources(ResourcesCmd::Read { pos, out, target: t }) => {
            (target(pos, t), Action::ResourcesRead { out })
        }
        Command::Prompts(PromptsCmd::List { pos, target: t }) => (target(pos, t), Action::PromptsList),
        Command::Prompts(PromptsCmd::Get { pos, args, out, target: t }) => {
            (target(pos, t), Action::PromptsGet { args, out })
        }
        Command::Complete { pos, prompt, resource, argument, value, context, target: t } => {
            let reference = match (prompt, resource) {
                (Some(p), _) => CompleteRef::Prompt(p),
                (None, Some(r)) => CompleteRef::Resource(r),
                (None, None) => unreachable!("clap requires --prompt or --resource"),
            };
            (target(pos, t), Action::Complete { reference, argument, value, context })
        }
        Command::Listen { pos, tools, prompts, resources, resource, target: t } => {
            (target(pos, t), Action::Listen { tools, prompts, resources, resource })
        }
        Command::Serve(_) => unreachable!("`serve` is not a client command"),
        Command::Proxy(_) => unreachable!("`proxy` is handled by main"),
        Command::Auth(_) => unreachable!("`auth` is handled by main"),
        Command::Doctor { .. } => unreachable!("`doctor` is handled by main"),
        Command::Inspect { .. } => unreachable!("`inspect` is handled by main"),
        Command::Install { .. } => unreachable!("`install` is handled by main"),
        Command::Dev { .. } => unreachable!("`dev` is handled by main"),
        Command::Servers(_) => unreachable!("`servers` is handled by main"),
    }
}

fn options(g: Global) -> Result<Options, String> {
    let bounds = list_bounds(&g);
    let timeout = match g.timeout {
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => return Err(format!("--timeout must be a positive number of seconds, got {s}")),
        None => None,
    };
    Ok(Options {
        json: g.json,
        timeout,
        headers: g.headers,
        roots: g.roots,
        no_input: g.no_input,
        interactive: g.interactive,
        log_level: g.log_level,
        follow_cross_origin_redirects: g.follow_cross_origin_redirects,
        config: g.config,
        force_legacy: g.force_legacy,
        trust_project_config: g.trust_project_config,
        icon_limits: mcp_cli::client::IconLimits { max_icons: g.max_icons, max_bytes: g.max_icon_bytes },
        list_bounds: bounds,
    })
}

/// `--max-list-bytes` and `--max-list-items`.
fn list_bounds(g: &Global) -> mcp_cli::client::ListBounds {
    mcp_cli::client::ListBounds { max_bytes: g.max_list_bytes, max_items: g.max_list_items }
}

/// Whether log lines on stderr may carry ANSI colours: only on a terminal, and not when
/// `NO_COLOR` is set to anything non-empty (<https://no-color.org>).
fn stderr_colors() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Parses the command line. `mcp serve ...` and `mcp help serve` go to [`ServeCli`]: the
/// client options are `global` on [`Cli`], so clap would list them under `serve` too.
fn parse_cli() -> Cli {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let word = |i: usize, w: &str| argv.get(i).is_some_and(|a| a == w);
    let skip = if word(1, "serve") {
        2
    } else if word(1, "help") && word(2, "serve") {
        3
    } else {
        return Cli::parse();
    };
    let mut args: Vec<std::ffi::OsString> = vec!["mcp serve".into()];
    args.extend(argv.into_iter().skip(skip));
    if skip == 3 {
        args.push("--help".into());
    }
    Cli { global: Global::default(), command: Command::Serve(Box::new(ServeCli::parse_from(args).args)) }
}

fn main() -> std::process::ExitCode {
    let cli = parse_cli();
    // Log lines on stderr, plus OTLP export with --otlp-endpoint; flushed when dropped at the
    // end of main (after the runtime).
    let telemetry = match &cli.command {
        Command::Serve(args) => &args.telemetry,
        _ => &cli.global.telemetry,
    };
    // Servers log like servers; a client command's warnings, and the proxy's notices about its
    // upstream, read like the CLI's other messages (`mcp: note: ...`).
    let style = match &cli.command {
        Command::Serve(_) => mcp_cli::telemetry::LogStyle::Server,
        _ => mcp_cli::telemetry::LogStyle::Command,
    };
    let _telemetry = mcp_cli::telemetry::init(telemetry, stderr_colors(), style);
    if matches!(cli.command, Command::Serve(_) | Command::Proxy(_)) {
        // A long-running server gives memory back after bursts, and a panicking handler logs
        // one line (no backtrace unless MCP_PANIC_BACKTRACE=1).
        malloc::tune_allocator();
        mcp::server::panic::install_hook();
    }
    // A stdio server has one client and one pipe each way: on one thread, reading a request,
    // running its handler and writing the answer involve no cross-thread wake-ups (and start
    // no worker threads). HTTP serves many connections: one worker per core.
    let stdio_server = matches!(&cli.command, Command::Serve(a) if a.stdio && a.http.is_none())
        && std::env::var("MCP_STDIO_THREADS").map_or(true, |v| v == "1");
    let rt = if stdio_server {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    }
    .expect("tokio runtime");
    match cli.command {
        Command::Serve(args) => {
            let ServeArgs { name: _, http, stdio, allow_hosts, skills, auth, shared, limits, telemetry: _ } = *args;
            serve(&rt, http, stdio, allow_hosts, skills, auth, (shared, limits))
        }
        Command::Proxy(args) => {
            let globals = mcp_cli::proxy::ProxyGlobals {
                list_bounds: list_bounds(&cli.global),
                headers: cli.global.headers,
                timeout: cli.global.timeout.map(Duration::from_secs_f64),
                force_legacy: cli.global.force_legacy,
                config: cli.global.config,
            };
            finish("mcp proxy", rt.block_on(mcp_cli::proxy::run(*args, globals)))
        }
        Command::Auth(cmd) => rt.block_on(mcp_cli::client::auth::run(cmd, cli.global.json)),
        Command::Doctor { pos, target: t } => with_options(cli.global, |opts| {
            let code = rt.block_on(mcp_cli::client::doctor::run(opts, target(pos, t)));
            rt.shutdown_timeout(Duration::from_millis(100));
            code
        }),
        Command::Inspect { pos, port, sandbox_port, backlog, no_open, target: t } => with_options(cli.global, |opts| {
            let page_backlog = backlog as usize * 1024 * 1024;
            let how = mcp_cli::inspect::InspectOptions { port, sandbox_port, open: !no_open, page_backlog };
            finish("mcp inspect", rt.block_on(mcp_cli::inspect::run(opts, target(pos, t), how)))
        }),
        Command::Dev { pos, cmd, watch, port, no_open, target: t } => with_options(cli.global, |opts| {
            let http_command: Vec<String> = cmd.iter().flat_map(|c| c.split_whitespace().map(str::to_owned)).collect();
            if http_command.is_empty() == t.command.is_empty() {
                eprintln!("mcp dev: give `-- COMMAND` (a stdio server), or `--cmd COMMAND URL` (an HTTP server)");
                return std::process::ExitCode::from(2);
            }
            let inspect = mcp_cli::inspect::InspectOptions { port, open: !no_open, ..Default::default() };
            let dev = mcp_cli::inspect::dev::DevOptions { inspect, watch, http_command };
            finish("mcp dev", rt.block_on(mcp_cli::inspect::dev::run(opts, target(pos, t), dev)))
        }),
        Command::Install { client, url, name, project, file, force, dry_run, target: t } => {
            finish("mcp install", install(client, url, (name, project, file, force, dry_run), t, &cli.global.headers))
        }
        Command::Servers(ServersCmd::List) => mcp_cli::client::servers::list(cli.global.config, cli.global.json),
        Command::Servers(ServersCmd::Trust { file }) => mcp_cli::client::servers::trust(file, cli.global.json),
        command => {
            let (target, action) = client_command(command);
            let json = cli.global.json;
            let code = match options(cli.global) {
                Ok(opts) => rt.block_on(mcp_cli::client::run(opts, target, action)),
                Err(e) => {
                    eprintln!("mcp: {e}");
                    if json {
                        println!("{}", serde_json::json!({ "error": { "message": e } }));
                    }
                    std::process::ExitCode::from(2)
                }
            };
            // A prompt may still be blocked reading stdin (after Ctrl-C): don't wait for it.
            rt.shutdown_timeout(Duration::from_millis(100));
            code
        }
    }
}

/// The exit code of a command that reports its own failure as `LABEL: error`.
fn finish(label: &str, r: Result<(), impl std::fmt::Display>) -> std::process::ExitCode {
    match r {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{label}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Runs `f` with the client options, or says why they are unusable (exit code 2).
fn with_options(g: Global, f: impl FnOnce(Options) -> std::process::ExitCode) -> std::process::ExitCode {
    match options(g) {
        Ok(opts) => f(opts),
        Err(e) => {
            eprintln!("mcp: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// `mcp install`: the entry from the URL or command, written into the host's file.
fn install(
    host: mcp_cli::install::Host,
    url: Option<String>,
    (name, project, file, force, dry_run): (Option<String>, bool, Option<PathBuf>, bool, bool),
    t: Target,
    headers: &[String],
) -> Result<(), String> {
    let pair = |what: &str, s: &str, sep: char| {
        s.split_once(sep)
            .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| format!("{what} {s:?}: write {}", if sep == '=' { "K=V" } else { "'Name: value'" }))
    };
    let url = match (url, t.command.is_empty()) {
        (Some(u), true) if u.starts_with("http://") || u.starts_with("https://") => Some(u),
        (Some(u), true) => {
            return Err(format!("{u} is not an http(s):// URL; for a stdio server pass `-- COMMAND ...`"))
        }
        (Some(_), false) => return Err("give a URL or `-- COMMAND`, not both".into()),
        (None, false) => None,
        (None, true) => return Err("nothing to install: give a URL or `-- COMMAND [ARGS...]`".into()),
    };
    let install = mcp_cli::install::Install {
        host,
        name,
        project,
        file,
        force,
        dry_run,
        url,
        headers: headers.iter().map(|h| pair("--header", h, ':')).collect::<Result<_, _>>()?,
        command: t.command,
        env: t.env.iter().map(|e| pair("--env", e, '=')).collect::<Result<_, _>>()?,
    };
    mcp_cli::install::run(&install)
}

fn serve(
    rt: &tokio::runtime::Runtime,
    http: Option<SocketAddr>,
    stdio: bool,
    allow_hosts: Vec<String>,
    skills: Option<PathBuf>,
    auth: mcp_cli::ServeAuth,
    (shared, limits): (mcp_cli::ServeShared, mcp_cli::ServeLimits),
) -> std::process::ExitCode {
    let result = rt.block_on(async move {
        let shared = shared.open(mcp_everything::NAME).await?;
        let builder = limits.apply_server(shared.apply(mcp_everything::builder()));
        let server = match skills {
            None => builder.skills(mcp_everything::skills::demo()).build(),
            Some(dir) => builder.skills_dir(&dir).build(),
        }
        .map_err(std::io::Error::other)?;
        match (http, stdio) {
            (Some(addr), _) => mcp_cli::serve_http(server, addr, allow_hosts, auth, &shared, &limits).await,
            (None, true) => {
                mcp_cli::stop_on_signal(&server);
                mcp::stdio::serve_stdio_with(server, limits.stdio()).await
            }
            (None, false) => Err(std::io::Error::other("choose a transport: --http ADDR or --stdio")),
        }
    });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
