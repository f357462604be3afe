//! The files as written (`mcpServers` / `servers`, JSONC) and the expansion of one entry's
//! `${VAR}`s, `envFile` and paths into a [`ServerSpec`](super::ServerSpec).

use super::*;

#[derive(Deserialize)]
#[serde(expecting = "an object with `mcpServers` or `servers`")]
pub(super) struct RawFile {
    #[serde(rename = "mcpServers")]
    pub(super) mcp_servers: Option<BTreeMap<String, RawServer>>,
    pub(super) servers: Option<BTreeMap<String, RawServer>>,
    /// Project files: the variables `${VAR}` may name.
    #[serde(rename = "allowEnv")]
    pub(super) allow_env: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a server object (`command` or `url`)")]
pub(super) struct RawServer {
    #[serde(rename = "type")]
    pub(super) kind: Option<RawKind>,
    pub(super) command: Option<String>,
    #[serde(default)]
    pub(super) args: Vec<String>,
    #[serde(default)]
    pub(super) env: BTreeMap<String, Scalar>,
    pub(super) cwd: Option<String>,
    pub(super) env_file: Option<String>,
    pub(super) url: Option<String>,
    #[serde(default)]
    pub(super) headers: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) disabled: bool,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawKind {
    Stdio,
    Http,
    StreamableHttp,
    Sse,
}

/// An `env` value: a string, or a number or boolean taken as its text.
#[derive(Deserialize)]
#[serde(untagged, expecting = "a string, number or boolean")]
pub(super) enum Scalar {
    String(String),
    Number(serde_json::Number),
    Bool(bool),
}

impl Scalar {
    fn text(self) -> String {
        match self {
            Scalar::String(s) => s,
            Scalar::Number(n) => n.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// serde_json appends " at line L column C"; the error carries them separately.
pub(super) fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_owned(),
        None => msg.to_owned(),
    }
}

/// Blanks out `//` and `/* */` comments and trailing commas, keeping every byte position.
pub(super) fn strip_jsonc(text: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    let blank = |b: &mut [u8], from: usize, to: usize| {
        for c in &mut b[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    let mut last_comma: Option<usize> = None;
    while i < b.len() {
        match b[i] {
            b'"' => {
                last_comma = None;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
                blank(&mut b, i, end);
                i = end;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len(), |p| i + 2 + p + 2);
                blank(&mut b, i, end);
                i = end;
                continue;
            }
            b',' => last_comma = Some(i),
            b'}' | b']' => {
                if let Some(c) = last_comma.take() {
                    b[c] = b' ';
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => last_comma = None,
        }
        i += 1;
    }
    // Only ASCII bytes were replaced, each whole comment at once: still UTF-8.
    String::from_utf8(b).unwrap_or_else(|_| text.to_owned())
}

/// Expansion context of one server entry.
pub(super) struct Ctx<'a> {
    pub(super) path: &'a Path,
    pub(super) server: &'a str,
    pub(super) base: &'a Path,
    pub(super) vars: Vars<'a>,
    /// A project file's `allowEnv` (`None`: the user's file, everything allowed).
    pub(super) allow: Option<&'a [String]>,
}

impl Ctx<'_> {
    fn invalid(&self, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid { path: self.path.into(), server: self.server.into(), message: message.into() }
    }

    pub(super) fn spec(&self, s: RawServer) -> Result<ServerSpec, ConfigError> {
        let http = match (s.kind, &s.command, &s.url) {
            (_, Some(_), Some(_)) => return Err(self.invalid("has both `command` and `url`; give one")),
            (None, None, None) => return Err(self.invalid("has neither `command` (stdio) nor `url` (HTTP)")),
            (Some(RawKind::Stdio), None, _) => return Err(self.invalid("is `type: stdio` but has no `command`")),
            (Some(k), None, None) => return Err(self.invalid(format!("is `type: {}` but has no `url`", k.name()))),
            (Some(k), Some(_), None) if k != RawKind::Stdio => {
                return Err(self.invalid(format!("is `type: {}` but has `command` instead of `url`", k.name())))
            }
            (_, Some(_), None) => false,
            (_, None, Some(_)) => true,
        };
        if http {
            if !s.args.is_empty() || !s.env.is_empty() || s.cwd.is_some() || s.env_file.is_some() {
                return Err(self.invalid("is an HTTP server (`url`): `args`, `env`, `envFile` and `cwd` do not apply"));
            }
            let url = self.expand("url", s.url.as_deref().unwrap_or_default())?;
            let mut headers = Vec::with_capacity(s.headers.len());
            for (k, v) in &s.headers {
                headers.push((k.clone(), self.expand(&format!("headers.{k}"), v)?));
            }
            return Ok(ServerSpec::Http { url, headers });
        }
        if !s.headers.is_empty() {
            return Err(self.invalid("is a stdio server (`command`): `headers` do not apply"));
        }
        let command = self.expand("command", s.command.as_deref().unwrap_or_default())?;
        if command.trim().is_empty() {
            return Err(self.invalid("`command` is empty"));
        }
        let args =
            s.args.iter().enumerate().map(|(i, a)| self.expand(&format!("args[{i}]"), a)).collect::<Result<_, _>>()?;
        let mut env = match &s.env_file {
            Some(f) => self.env_file(&self.expand("envFile", f)?)?,
            None => Vec::new(),
        };
        for (k, v) in s.env {
            let v = self.expand(&format!("env.{k}"), &v.text())?;
            env.push((k, v));
        }
        let cwd = match &s.cwd {
            Some(c) => Some(self.base.join(self.expand("cwd", c)?)),
            None => None,
        };
        Ok(ServerSpec::Stdio { command, args, env, cwd })
    }

    /// Reads a dotenv-style file (relative to the base folder).
    fn env_file(&self, file: &str) -> Result<Vec<(String, String)>, ConfigError> {
        let path = self.base.join(file);
        if self.allow.is_some() {
            let io = |p: &Path, source| ConfigError::Io { path: p.into(), source };
            let folder = self.base.canonicalize().map_err(|e| io(self.base, e))?;
            let real = path.canonicalize().map_err(|e| io(&path, e))?;
            if !real.starts_with(&folder) {
                return Err(ConfigError::EnvFileOutside {
                    path: self.path.into(),
                    server: self.server.into(),
                    file: real,
                    folder,
                });
            }
        }
        let text = read(&path)?;
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let line = line.strip_prefix("export ").unwrap_or(line);
            let Some((k, v)) = line.split_once('=') else {
                return Err(self.invalid(format!("{}:{}: expected KEY=VALUE", path.display(), n + 1)));
            };
            let v = v.trim();
            let v = [('"', '"'), ('\'', '\'')]
                .iter()
                .find_map(|(a, b)| v.strip_prefix(*a).and_then(|r| r.strip_suffix(*b)).filter(|_| v.len() >= 2))
                .unwrap_or(v);
            out.push((k.trim().to_owned(), v.to_owned()));
        }
        Ok(out)
    }

    /// Expands the variables of one field's value.
    fn expand(&self, field: &str, s: &str) -> Result<String, ConfigError> {
        let unsupported = |message: String| ConfigError::Unsupported {
            path: self.path.into(),
            server: self.server.into(),
            field: field.into(),
            message,
        };
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            if let Some(tail) = after.strip_prefix("${") {
                out.push_str("${");
                rest = tail;
                continue;
            }
            let Some(body) = after.strip_prefix('{') else {
                out.push('$');
                rest = after;
                continue;
            };
            let Some(end) = body.find('}') else {
                return Err(unsupported(format!("unterminated `${{` in {s:?}")));
            };
            match self.variable(&body[..end]) {
                Ok(v) => out.push_str(&v),
                Err(VarError::Bad(m)) => return Err(unsupported(m)),
                Err(VarError::Undeclared(variable)) => {
                    return Err(ConfigError::UndeclaredVariable {
                        path: self.path.into(),
                        server: self.server.into(),
                        field: field.into(),
                        variable,
                    })
                }
                Err(VarError::Missing(variable)) => {
                    return Err(ConfigError::MissingVariable {
                        path: self.path.into(),
                        server: self.server.into(),
                        field: field.into(),
                        variable,
                    })
                }
            }
            rest = &body[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The value of `${inner}`.
    fn variable(&self, inner: &str) -> Result<String, VarError> {
        if inner == "workspaceFolder" {
            return Ok(self.base.to_string_lossy().into_owned());
        }
        let inner = inner.strip_prefix("env:").unwrap_or(inner);
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if let Some((scheme, _)) = name.split_once(':') {
            return Err(VarError::Bad(match scheme {
                "input" => format!("`${{{inner}}}`: VS Code input variables (prompts) are not supported; set the value in the file or use ${{env:NAME}}"),
                _ => format!("`${{{inner}}}`: `{scheme}:` variables are not supported (only ${{NAME}}, ${{env:NAME}}, ${{NAME:-default}}, ${{workspaceFolder}})"),
            }));
        }
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(VarError::Bad(format!("`${{{inner}}}` is not a valid variable reference")));
        }
        if self.allow.is_some_and(|a| !a.iter().any(|n| n == name)) {
            return Err(VarError::Undeclared(name.to_owned()));
        }
        match ((self.vars)(name), default) {
            (Some(v), Some(d)) if v.is_empty() => Ok(d.to_owned()),
            (Some(v), _) => Ok(v),
            (None, Some(d)) => Ok(d.to_owned()),
            (None, None) => Err(VarError::Missing(name.to_owned())),
        }
    }
}

/// Why a `${...}` has no value.
pub(super) enum VarError {
    /// The variable is unset (and there is no default).
    Missing(String),
    /// Not supported or malformed: the message.
    Bad(String),
    /// A project file names a variable it does not declare in `allowEnv`.
    Undeclared(String),
}

impl RawKind {
    fn name(self) -> &'static str {
        match self {
            RawKind::Stdio => "stdio",
            RawKind::Http => "http",
            RawKind::StreamableHttp => "streamable-http",
            RawKind::Sse => "sse",
        }
    }
}
