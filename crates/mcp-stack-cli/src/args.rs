//! The `mcp` binary's command line: the global client options, the commands and their flags
//! (clap derive). Part of the binary (`main.rs`), not of the `mcp_cli` library. Each command's
//! flags are one type, so `main` matches the command once and hands the whole type to its `run`.

use clap::{Args, Subcommand};
use mcp_cli::client::{Action, CompleteRef, TargetArgs, TaskAction};
use std::net::SocketAddr;
use std::path::PathBuf;

/// What a client command does, and to which server.
pub(crate) type Call = (TargetArgs, Action);

/// Options of every client command.
#[derive(Args, Default)]
#[command(next_help_heading = "Client options")]
pub(crate) struct Global {
    /// Machine output: exactly one JSON document on stdout (the raw result).
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Seconds a request may wait for the server's next message (default 60).
    #[arg(long, global = true, value_name = "SECS")]
    pub(crate) timeout: Option<f64>,
    /// Extra HTTP header, 'Name: value' (repeatable; HTTP targets only).
    #[arg(long = "header", global = true, value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    /// Declare the roots capability and answer roots/list with this root (repeatable).
    #[arg(long = "root", global = true, value_name = "URI")]
    pub(crate) roots: Vec<String>,
    /// Refuse elicitation and sampling (their capabilities are not declared).
    #[arg(long, global = true)]
    pub(crate) no_input: bool,
    /// Ask elicitation/sampling questions even when stdin is not a terminal (answers are read line by line).
    #[arg(long, global = true, conflicts_with = "no_input")]
    pub(crate) interactive: bool,
    /// Ask the server for log messages at this level (shown on stderr; a legacy server is sent logging/setLevel).
    #[arg(long, global = true, value_name = "LEVEL")]
    pub(crate) log_level: Option<String>,
    /// Follow a 307/308 redirect to another origin (refused by default). Custom headers,
    /// Authorization and stored tokens are never sent to the other origin.
    #[arg(long, global = true)]
    pub(crate) follow_cross_origin_redirects: bool,
    /// Server config file (`mcpServers` or VS Code `servers`) for NAME targets (default: ./.mcp.json,
    /// ./mcp.json, ./.vscode/mcp.json, then the user's config dir, e.g. ~/.config/mcp/mcp.json).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Skip era detection and open a legacy `initialize` session at this protocol version
    /// (2025-11-25 or older), for servers that mishandle the modern probe.
    #[arg(long, global = true, value_name = "VERSION")]
    pub(crate) force_legacy: Option<String>,
    /// Use project config files (./.mcp.json, ./mcp.json, ./.vscode/mcp.json) not approved
    /// with `mcp servers trust`, for this run (also MCP_TRUST_PROJECT_CONFIG=1).
    #[arg(long, global = true)]
    pub(crate) trust_project_config: bool,
    /// With --save-icons: fetch at most N icons, then stop with a message.
    #[arg(long, global = true, value_name = "N", default_value_t = 256)]
    pub(crate) max_icons: usize,
    /// With --save-icons: save at most this many bytes in all, then stop with a message.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    pub(crate) max_icon_bytes: u64,
    /// Most bytes (JSON) of one list read in full, all pages together (`mcp tools list`; with
    /// `mcp proxy`, each upstream's list and each merged one): past it, an error (a gateway
    /// leaves an upstream past it out of the merged list instead).
    #[arg(long, global = true, value_name = "BYTES", default_value_t = mcp_client::DEFAULT_MAX_LIST_BYTES)]
    pub(crate) max_list_bytes: usize,
    /// Most items of one list read in full, all pages together (as --max-list-bytes).
    #[arg(long, global = true, value_name = "N", default_value_t = mcp_client::DEFAULT_MAX_LIST_ITEMS)]
    pub(crate) max_list_items: usize,
    /// OpenTelemetry export: --otlp-endpoint.
    #[command(flatten)]
    pub(crate) telemetry: mcp_cli::telemetry::TelemetryArgs,
}

/// Where the server is: a URL (first positional) or a stdio command (after `--`).
#[derive(Args)]
pub(crate) struct Target {
    /// Environment variable for a stdio server (repeatable).
    #[arg(long = "env", value_name = "K=V")]
    pub(crate) env: Vec<String>,
    /// Working directory of a stdio server.
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    /// The stdio server command and its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

/// The flags of `mcp serve` (and only those: see `parse_cli` in main.rs).
#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Which server (`everything`: every conformance fixture plus demo tools).
    #[arg(value_parser = ["everything"])]
    pub(crate) name: String,
    /// Serve Streamable HTTP on this address (path /mcp), e.g. 127.0.0.1:3000.
    #[arg(long, conflicts_with = "stdio")]
    pub(crate) http: Option<SocketAddr>,
    /// Serve on stdin/stdout.
    #[arg(long)]
    pub(crate) stdio: bool,
    /// Extra Host names to accept (DNS-rebinding protection allows loopback names only by default).
    #[arg(long = "allow-host")]
    pub(crate) allow_hosts: Vec<String>,
    /// Serve the skills in this folder (each subfolder with a SKILL.md) instead of the demo skills.
    #[arg(long, value_name = "DIR")]
    pub(crate) skills: Option<PathBuf>,
    /// OAuth protection (HTTP only): --auth-issuer, --auth-audience, --auth-jwks, --auth-scopes.
    #[command(flatten)]
    pub(crate) auth: mcp_cli::ServeAuth,
    /// Many instances of one service: --redis, --state-secret-file.
    #[command(flatten)]
    pub(crate) shared: mcp_cli::ServeShared,
    /// Transport limits (all on by default).
    #[command(flatten)]
    pub(crate) limits: mcp_cli::ServeLimits,
    /// OpenTelemetry export: --otlp-endpoint.
    #[command(flatten)]
    pub(crate) telemetry: mcp_cli::telemetry::TelemetryArgs,
}

/// The commands. `main` matches this enum once, calling one `run` per command.
#[derive(Subcommand)]
pub(crate) enum Command {
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
    Inspect(InspectArgs),
    /// The inspector on a server under development: restarts the server when files under the
    /// current folder change (not target/ or dot-folders) and keeps the page connected.
    #[command(override_usage = "mcp dev [OPTIONS] -- COMMAND...\n       mcp dev [OPTIONS] --cmd 'COMMAND ARGS' URL")]
    Dev(DevArgs),
    /// Add a server to an MCP host's configuration (Claude Desktop, Claude Code, Cursor, VS
    /// Code, Gemini CLI, or a plain mcp.json), keeping everything else in the file; the old
    /// file is saved as FILE.bak.
    #[command(override_usage = "mcp install [OPTIONS] CLIENT URL\n       mcp install [OPTIONS] CLIENT -- COMMAND...")]
    Install(InstallArgs),
    /// Show a server's era and protocol version, identity, capabilities and instructions.
    #[command(override_usage = "mcp discover [OPTIONS] URL\n       mcp discover [OPTIONS] -- COMMAND...")]
    Discover(Located),
    /// Check every step of connecting to a server (DNS, TCP, TLS, era, headers, auth, token)
    /// and print a fix for each failure; exit code 1 if a step failed.
    #[command(override_usage = "mcp doctor [OPTIONS] URL\n       mcp doctor [OPTIONS] -- COMMAND...")]
    Doctor(Located),
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
    Complete(CompleteArgs),
    /// Print change notifications until Ctrl-C or until the server ends the subscription
    /// (all list changes when no filter is given).
    #[command(override_usage = "mcp listen [OPTIONS] URL\n       mcp listen [OPTIONS] -- COMMAND...")]
    Listen(ListenArgs),
}

// The flag types of single commands carry no doc comment of their own: clap takes a command's
// help text from its variant in `Command`.

// A server and nothing else: `mcp discover`, `mcp doctor`, the `list` subcommands.
#[derive(Args)]
pub(crate) struct Located {
    #[arg(value_name = "URL")]
    pos: Vec<String>,
    #[command(flatten)]
    target: Target,
}

// `mcp inspect`.
#[derive(Args)]
pub(crate) struct InspectArgs {
    #[arg(value_name = "URL")]
    pub(crate) pos: Vec<String>,
    /// Port of the page on 127.0.0.1 (default: any free one).
    #[arg(long, default_value_t = 0)]
    pub(crate) port: u16,
    /// Port of the MCP Apps sandbox on [::1] (127.0.0.1 without IPv6 loopback; default: any
    /// free one).
    #[arg(long, default_value_t = 0)]
    pub(crate) sandbox_port: u16,
    /// MiB of events queued for a page that reads slowly; past it the oldest are dropped and
    /// the page shows how many.
    #[arg(long = "page-backlog-mib", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) backlog: u32,
    /// Do not open a browser (print the URL only).
    #[arg(long)]
    pub(crate) no_open: bool,
    #[command(flatten)]
    pub(crate) target: Target,
}

// `mcp dev`.
#[derive(Args)]
pub(crate) struct DevArgs {
    #[arg(value_name = "URL")]
    pub(crate) pos: Vec<String>,
    /// For an HTTP server at URL: the command that runs it (split on spaces).
    #[arg(long, value_name = "COMMAND")]
    pub(crate) cmd: Option<String>,
    /// The folder to watch (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub(crate) watch: Option<PathBuf>,
    /// Port of the page on 127.0.0.1 (default: any free one).
    #[arg(long, default_value_t = 0)]
    pub(crate) port: u16,
    /// Do not open a browser (print the URL only).
    #[arg(long)]
    pub(crate) no_open: bool,
    #[command(flatten)]
    pub(crate) target: Target,
}

// `mcp install`.
#[derive(Args)]
pub(crate) struct InstallArgs {
    /// The host to configure.
    #[arg(value_enum)]
    pub(crate) client: mcp_cli::install::Host,
    #[arg(value_name = "URL")]
    pub(crate) url: Option<String>,
    /// The server's name in the file (default: the URL's host or the program's name).
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// The project's file (in the current folder) instead of the user's.
    #[arg(long)]
    pub(crate) project: bool,
    /// Write this file instead of the host's own.
    #[arg(long, value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
    /// Replace a server of the same name.
    #[arg(long)]
    pub(crate) force: bool,
    /// Print the file as it would be; write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    #[command(flatten)]
    pub(crate) target: Target,
}

// `mcp complete`.
#[derive(Args)]
pub(crate) struct CompleteArgs {
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
}

// `mcp listen`.
#[derive(Args)]
pub(crate) struct ListenArgs {
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
}

#[derive(Subcommand)]
pub(crate) enum ServersCmd {
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
pub(crate) enum ToolsCmd {
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
pub(crate) enum TasksCmd {
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
pub(crate) enum SkillsCmd {
    /// List the server's skills (nothing is read).
    #[command(override_usage = "mcp skills list [OPTIONS] URL\n       mcp skills list [OPTIONS] -- COMMAND...")]
    List(Located),
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
pub(crate) enum ResourcesCmd {
    /// List the server's resources.
    #[command(override_usage = "mcp resources list [OPTIONS] URL\n       mcp resources list [OPTIONS] -- COMMAND...")]
    List(Located),
    /// List the server's resource templates.
    #[command(
        override_usage = "mcp resources templates [OPTIONS] URL\n       mcp resources templates [OPTIONS] -- COMMAND..."
    )]
    Templates(Located),
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
pub(crate) enum PromptsCmd {
    /// List the server's prompts (`*` marks required arguments).
    #[command(override_usage = "mcp prompts list [OPTIONS] URL\n       mcp prompts list [OPTIONS] -- COMMAND...")]
    List(Located),
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

impl Target {
    /// The target with the command's positionals (`URL`, then the command's own words).
    pub(crate) fn with(self, positionals: Vec<String>) -> TargetArgs {
        TargetArgs { positionals, command: self.command, env: self.env, cwd: self.cwd }
    }
}

impl Located {
    /// The server this command is about.
    pub(crate) fn target(self) -> TargetArgs {
        self.target.with(self.pos)
    }

    /// `mcp discover`: the server's era, identity and capabilities.
    pub(crate) fn discover(self) -> Call {
        (self.target(), Action::Discover)
    }
}

impl CompleteArgs {
    /// The completion request. clap requires `--prompt` or `--resource`; should neither
    /// arrive, the error is reported like any unusable option.
    pub(crate) fn call(self) -> Result<Call, String> {
        let reference = match (self.prompt, self.resource) {
            (Some(p), _) => CompleteRef::Prompt(p),
            (None, Some(r)) => CompleteRef::Resource(r),
            (None, None) => return Err("give --prompt NAME or --resource URI".into()),
        };
        let action = Action::Complete { reference, argument: self.argument, value: self.value, context: self.context };
        Ok((self.target.with(self.pos), action))
    }
}

impl ListenArgs {
    /// The subscription asked for.
    pub(crate) fn call(self) -> Call {
        let Self { pos, tools, prompts, resources, resource, target } = self;
        (target.with(pos), Action::Listen { tools, prompts, resources, resource })
    }
}

impl ToolsCmd {
    /// The target and action of `mcp tools ...`.
    pub(crate) fn call(self) -> Call {
        match self {
            Self::List { pos, save_icons, target } => (target.with(pos), Action::ToolsList { save_icons }),
            Self::Show { pos, save_icons, target } => (target.with(pos), Action::ToolsShow { save_icons }),
            Self::Call { pos, args, out, detach, target } => {
                (target.with(pos), Action::ToolsCall { args, out, detach })
            }
        }
    }
}

impl TasksCmd {
    /// The target and action of `mcp tasks ...`.
    pub(crate) fn call(self) -> Call {
        let (pos, target, action) = match self {
            Self::Get { pos, target } => (pos, target, TaskAction::Get),
            Self::Wait { pos, target } => (pos, target, TaskAction::Wait),
            Self::Cancel { pos, target } => (pos, target, TaskAction::Cancel),
        };
        (target.with(pos), Action::Task(action))
    }
}

impl SkillsCmd {
    /// The target and action of `mcp skills ...`.
    pub(crate) fn call(self) -> Call {
        let (pos, target, action) = match self {
            Self::List(at) => (at.pos, at.target, Action::SkillsList),
            Self::Get { pos, target } => (pos, target, Action::SkillsGet),
            Self::Read { pos, target } => (pos, target, Action::SkillsRead),
        };
        (target.with(pos), action)
    }
}

impl ResourcesCmd {
    /// The target and action of `mcp resources ...`.
    pub(crate) fn call(self) -> Call {
        match self {
            Self::List(at) => (at.target(), Action::ResourcesList),
            Self::Templates(at) => (at.target(), Action::ResourcesTemplates),
            Self::Read { pos, out, target } => (target.with(pos), Action::ResourcesRead { out }),
        }
    }
}

impl PromptsCmd {
    /// The target and action of `mcp prompts ...`.
    pub(crate) fn call(self) -> Call {
        match self {
            Self::List(at) => (at.target(), Action::PromptsList),
            Self::Get { pos, args, out, target } => (target.with(pos), Action::PromptsGet { args, out }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The commands alone (the global options live on `Cli` in main.rs).
    #[derive(Parser)]
    struct Commands {
        #[command(subcommand)]
        command: Command,
    }

    fn parse(args: &[&str]) -> Command {
        Commands::try_parse_from(std::iter::once("mcp").chain(args.iter().copied())).expect("parses").command
    }

    #[test]
    fn complete_with_a_resource_completes_the_template_variable() {
        let Command::Complete(args) =
            parse(&["complete", "http://h/mcp", "--resource", "file:///{path}", "--arg", "path"])
        else {
            panic!("not `complete`")
        };
        let (target, action) = args.call().expect("a reference was given");
        assert_eq!(target.positionals, ["http://h/mcp"]);
        match action {
            Action::Complete { reference: CompleteRef::Resource(uri), argument, value, context } => {
                assert_eq!((uri.as_str(), argument.as_str(), value.as_str()), ("file:///{path}", "path", ""));
                assert!(context.is_empty());
            }
            other => panic!("unexpected action {other:?}"),
        }
    }

    #[test]
    fn complete_without_a_reference_is_an_error_not_a_panic() {
        let args = CompleteArgs {
            pos: vec![],
            prompt: None,
            resource: None,
            argument: "a".into(),
            value: String::new(),
            context: vec![],
            target: Target { env: vec![], cwd: None, command: vec![] },
        };
        assert_eq!(args.call().map(|_| ()).unwrap_err(), "give --prompt NAME or --resource URI");
    }

    #[test]
    fn clap_refuses_complete_with_neither_prompt_nor_resource() {
        let err = Commands::try_parse_from(["mcp", "complete", "--arg", "a", "http://h/mcp"]).map(|_| ()).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn tools_call_keeps_its_operands_and_flags() {
        let Command::Tools(cmd) =
            parse(&["tools", "call", "http://h/mcp", "echo", r#"{"text":"hi"}"#, "--arg", "n=1", "--detach"])
        else {
            panic!("not `tools`")
        };
        let (target, action) = cmd.call();
        assert_eq!(target.positionals, ["http://h/mcp", "echo", r#"{"text":"hi"}"#]);
        assert!(target.command.is_empty());
        match action {
            Action::ToolsCall { args, out, detach } => {
                assert_eq!(args, ["n=1"]);
                assert_eq!(out, None);
                assert!(detach);
            }
            other => panic!("unexpected action {other:?}"),
        }
    }

    #[test]
    fn a_stdio_server_is_the_command_after_the_double_dash() {
        let Command::Skills(cmd) =
            parse(&["skills", "list", "--env", "K=V", "--cwd", "/srv", "--", "mcp", "serve", "everything", "--stdio"])
        else {
            panic!("not `skills`")
        };
        let (target, action) = cmd.call();
        assert!(matches!(action, Action::SkillsList));
        assert!(target.positionals.is_empty());
        assert_eq!(target.command, ["mcp", "serve", "everything", "--stdio"]);
        assert_eq!(target.env, ["K=V"]);
        assert_eq!(target.cwd.as_deref(), Some(std::path::Path::new("/srv")));
    }

    #[test]
    fn each_tasks_subcommand_is_its_task_action() {
        for (word, expected) in [("get", TaskAction::Get), ("wait", TaskAction::Wait), ("cancel", TaskAction::Cancel)] {
            let Command::Tasks(cmd) = parse(&["tasks", word, "http://h/mcp", "t-1"]) else { panic!("not `tasks`") };
            let (target, action) = cmd.call();
            assert_eq!(target.positionals, ["http://h/mcp", "t-1"]);
            match action {
                Action::Task(got) => assert_eq!(got, expected),
                other => panic!("unexpected action {other:?}"),
            }
        }
    }

    #[test]
    fn discover_and_listen_name_their_target_and_filters() {
        let Command::Discover(at) = parse(&["discover", "http://h/mcp"]) else { panic!("not `discover`") };
        let (target, action) = at.discover();
        assert_eq!(target.positionals, ["http://h/mcp"]);
        assert!(matches!(action, Action::Discover));

        let Command::Listen(args) = parse(&["listen", "http://h/mcp", "--tools", "--resource", "file:///a"]) else {
            panic!("not `listen`")
        };
        match args.call().1 {
            Action::Listen { tools, prompts, resources, resource } => {
                assert!(tools && !prompts && !resources);
                assert_eq!(resource, ["file:///a"]);
            }
            other => panic!("unexpected action {other:?}"),
        }
    }
}
