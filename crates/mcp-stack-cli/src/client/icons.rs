//! Tool icons: listing them (`src`, `mimeType`, `sizes`) and `--save-icons DIR`, which fetches
//! each with [`IconFetcher`] (the specification's icon rules) and saves the validated ones.
//!
//! The server's URL is the target's: icons must be on its origin. A stdio target has no
//! origin, so only `data:` icons can be saved from it. When the target itself is plain
//! `http://` on a loopback IP (a local development server), `http:` icons on that same origin
//! are accepted too ([`IconFetcherBuilder::allow_loopback_http`]); everywhere else only `https:`
//! and `data:`.
//!
//! [`IconFetcherBuilder::allow_loopback_http`]: mcp_client::icons::IconFetcherBuilder::allow_loopback_http

use super::render::{self, Stream};
use super::{IconLimits, Target};
use mcp_client::icons::{FetchedIcon, Icon, IconFetcher};
use serde_json::{json, Value};
use std::io::Write as _;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// The icons of a tool (or any object with an `icons` array): each as parsed, or the raw
/// value that does not parse as an icon.
pub(super) fn icons_of(item: &Value) -> Vec<Result<Icon, Value>> {
    let Some(list) = item.get("icons").and_then(Value::as_array) else { return Vec::new() };
    list.iter().map(|v| serde_json::from_value::<Icon>(v.clone()).map_err(|_| v.clone())).collect()
}

/// One line per icon: `src  mimeType  sizes` (absent fields are left out; a long `data:` URI is
/// shortened).
pub(super) fn icon_lines(item: &Value) -> Vec<String> {
    icons_of(item)
        .into_iter()
        .map(|icon| match icon {
            Ok(i) => {
                let mut line = shorten(&i.src);
                if let Some(m) = &i.mime_type {
                    line.push_str(&format!("  {m}"));
                }
                if let Some(s) = i.sizes.as_ref().filter(|s| !s.is_empty()) {
                    line.push_str(&format!("  {}", s.join(" ")));
                }
                line
            }
            Err(raw) => format!("(not an icon: {})", shorten(&raw.to_string())),
        })
        .collect()
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= 80 {
        return s.to_string();
    }
    let head: String = s.chars().take(60).collect();
    format!("{head}... ({} chars)", s.len())
}

/// The fetcher for `target`'s icons.
fn fetcher(target: &Target) -> (IconFetcher, Option<&str>) {
    let url = match target {
        Target::Http { url, .. } => Some(url.as_str()),
        Target::Stdio { .. } => None,
    };
    let loopback_http = url.and_then(|u| url::Url::parse(u).ok()).is_some_and(|u| {
        u.scheme() == "http"
            && u.host_str()
                .and_then(|h| h.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().ok())
                .is_some_and(|ip| ip.is_loopback())
    });
    (IconFetcher::builder().allow_loopback_http(loopback_http).build(), url)
}

/// Fetches every icon of `tools` and saves the validated ones in `dir` as
/// `{tool}-{index}.{ext}` (the extension from the detected type; an existing file is never
/// overwritten). Prints one line per icon unless `json`; returns one JSON entry per icon.
///
/// Bounded by `limits`: at most `max_icons` icons are fetched and `max_bytes` saved in all;
/// at the bound the run stops with a message on stderr (and a `{"stopped": ...}` entry), the
/// remaining icons left alone.
pub(super) async fn save_icons(
    target: &Target,
    tools: &[Value],
    dir: &Path,
    json: bool,
    limits: IconLimits,
) -> Vec<Value> {
    let (fetcher, server) = fetcher(target);
    let mut report = Vec::new();
    let (mut fetched, mut bytes) = (0usize, 0u64);
    'tools: for tool in tools {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("tool");
        for (index, icon) in icons_of(tool).into_iter().enumerate() {
            let stop = |why: String| json!({ "tool": name, "index": index, "stopped": why });
            if fetched >= limits.max_icons {
                report.push(stop(format!("stopped after {fetched} icons (the limit; raise it with --max-icons N)")));
                break 'tools;
            }
            let entry = match icon {
                Err(raw) => refused(name, index, &raw.to_string(), "the entry is not an icon object (no string `src`)"),
                Ok(icon) => {
                    fetched += 1;
                    match fetcher.fetch(&icon, server).await {
                        Err(e) => refused(name, index, &icon.src, &e.to_string()),
                        Ok(got) if bytes + got.bytes.len() as u64 > limits.max_bytes => {
                            report.push(stop(format!(
                                "stopped at {bytes} bytes saved: icon {index} of {name} ({} bytes) would pass the \
                                 limit of {} bytes (raise it with --max-icon-bytes N)",
                                got.bytes.len(),
                                limits.max_bytes
                            )));
                            break 'tools;
                        }
                        Ok(got) => match save(dir, name, index, &got) {
                            Ok(path) => {
                                bytes += got.bytes.len() as u64;
                                json!({
                                    "tool": name, "index": index, "src": icon.src, "saved": path,
                                    "mimeType": got.mime.as_str(), "width": got.width, "height": got.height,
                                })
                            }
                            Err(e) => refused(name, index, &icon.src, &e),
                        },
                    }
                }
            };
            if !json {
                print(&entry);
            }
            report.push(entry);
        }
    }
    if let Some(why) = report.last().and_then(|e| e["stopped"].as_str()) {
        Stream::Err.line(&format!("mcp: --save-icons {why}"));
    }
    if !json && report.is_empty() {
        Stream::Err.line("no icons to save");
    }
    report
}

fn refused(tool: &str, index: usize, src: &str, reason: &str) -> Value {
    json!({ "tool": tool, "index": index, "src": src, "refused": reason })
}

fn print(entry: &Value) {
    let tool = entry["tool"].as_str().unwrap_or("");
    let index = entry["index"].as_u64().unwrap_or(0);
    let src = shorten(entry["src"].as_str().unwrap_or(""));
    if let Some(path) = entry["saved"].as_str() {
        let (mime, w, h) = (entry["mimeType"].as_str().unwrap_or(""), &entry["width"], &entry["height"]);
        Stream::Out.line(&format!("saved {path} ({mime}, {w}x{h}) from {src}"));
    } else {
        let reason = entry["refused"].as_str().unwrap_or("");
        Stream::Err.line(&format!("refused icon {index} of {tool} ({src}): {reason}"));
    }
}

fn save(dir: &Path, tool: &str, index: usize, icon: &FetchedIcon) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = format!("{}-{index}", render::sanitize(tool));
    let ext = icon.mime.extension();
    for n in 0..1000 {
        let path = if n == 0 { dir.join(format!("{stem}.{ext}")) } else { dir.join(format!("{stem}-{n}.{ext}")) };
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                f.write_all(&icon.bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
        }
    }
    Err(format!("too many files named {stem}* in {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_src_type_and_sizes() {
        let tool = json!({"name": "t", "icons": [
            {"src": "https://a.example/i.png", "mimeType": "image/png", "sizes": ["16x16", "32x32"]},
            {"src": format!("data:image/png;base64,{}", "A".repeat(200))},
            {"nosrc": 1},
        ]});
        let lines = icon_lines(&tool);
        assert_eq!(lines[0], "https://a.example/i.png  image/png  16x16 32x32");
        assert!(
            lines[1].starts_with("data:image/png;base64,AAA") && lines[1].ends_with("... (222 chars)"),
            "{}",
            lines[1]
        );
        assert_eq!(lines[2], "(not an icon: {\"nosrc\":1})");
        assert!(icon_lines(&json!({"name": "x"})).is_empty());
    }
}
