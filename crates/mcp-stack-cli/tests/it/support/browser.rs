//! A headless Chromium driven over the Chrome DevTools Protocol, for the inspector's browser
//! tests: the browser is a child process speaking CDP on a pipe (`--remote-debugging-pipe`:
//! JSON messages separated by NUL bytes, commands on fd 3, answers and events on fd 4, which a
//! `sh` wrapper connects to our pipes), so no port is opened and nothing else is needed. Every
//! wait is bounded.
//!
//! Chromium is the distribution's package (`chromium`, installed by `scripts/test-deps.sh`).

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The browser program: `$MCP_TEST_CHROMIUM`, else `chromium` (Debian) or `chromium-browser`.
pub(crate) fn program() -> Option<String> {
    if let Ok(p) = std::env::var("MCP_TEST_CHROMIUM") {
        return Some(p);
    }
    ["chromium", "chromium-browser", "google-chrome"].into_iter().map(str::to_owned).find(|p| {
        Command::new(p).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    })
}

/// A running browser and one page in it.
pub(crate) struct Browser {
    child: Child,
    to_browser: std::process::ChildStdin,
    from_browser: mpsc::Receiver<Value>,
    next_id: u64,
    /// Events received while waiting for answers, oldest first.
    events: VecDeque<Value>,
    /// The page's CDP session.
    pub(crate) page: String,
    _profile: TempProfile,
}

struct TempProfile(std::path::PathBuf);

impl Drop for TempProfile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A step took longer than allowed.
const STEP: Duration = Duration::from_secs(20);

impl Browser {
    /// Starts the browser (headless, a fresh profile) with one blank page attached.
    pub(crate) fn start(program: &str) -> Browser {
        let profile = std::env::temp_dir().join(format!("mcp-chromium-{}-{}", std::process::id(), rand_suffix()));
        // The shell moves our pipes to the descriptors CDP uses (3: commands in, 4: answers out)
        // and gives the browser /dev/null as stdin and stdout.
        let mut command = Command::new("sh");
        command
            .args(["-c", "exec \"$0\" \"$@\" 3<&0 4>&1 0</dev/null 1>/dev/null", program])
            .args([
                "--headless=new",
                "--remote-debugging-pipe",
                "--no-sandbox", // CI runs as root; the page under test is ours
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--metrics-recording-only",
                "--site-per-process",
                "--window-size=1280,1000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().unwrap_or_else(|e| panic!("{program}: {e}"));
        let (cmd_write, out_read) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let (tx, rx) = mpsc::sync_channel(10_000);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(out_read);
            let mut buf = Vec::new();
            while reader.read_until(0, &mut buf).is_ok_and(|n| n > 0) {
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
                buf.clear();
            }
        });
        let mut b = Browser {
            child,
            to_browser: cmd_write,
            from_browser: rx,
            next_id: 1,
            events: VecDeque::new(),
            page: String::new(),
            _profile: TempProfile(profile),
        };
        let target = b.send(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().expect("a target").to_owned();
        let attached = b.send(None, "Target.attachToTarget", json!({"targetId": target_id, "flatten": true}));
        b.page = attached["sessionId"].as_str().expect("a session").to_owned();
        let page = b.page.clone();
        b.send(Some(&page), "Page.enable", json!({}));
        b.send(Some(&page), "Runtime.enable", json!({}));
        // Frames of other sites (the MCP Apps sandbox) get sessions of their own.
        b.send(
            Some(&page),
            "Target.setAutoAttach",
            json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
        );
        b
    }

    /// Sends `method` (in `session`, or to the browser) and waits for its answer.
    pub(crate) fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        match self.try_send(session, method, params) {
            Ok(v) => v,
            Err(e) => panic!("{method}: {e}"),
        }
    }

    /// [`Browser::send`], with the protocol's error returned instead of a panic.
    fn try_send(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = msg.to_string().into_bytes();
        bytes.push(0);
        self.to_browser.write_all(&bytes).expect("write to the browser");
        let deadline = Instant::now() + STEP;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m =
                self.from_browser.recv_timeout(left).unwrap_or_else(|_| panic!("{method}: no answer within {STEP:?}"));
            if m.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(e) = m.get("error") {
                    return Err(e.clone());
                }
                return Ok(m["result"].clone());
            }
            if self.events.len() < 100_000 {
                self.events.push_back(m);
            }
        }
    }

    /// Moves events that arrived meanwhile into the queue.
    fn pump(&mut self) {
        while let Ok(m) = self.from_browser.try_recv() {
            if self.events.len() < 100_000 {
                self.events.push_back(m);
            }
        }
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns its JSON value.
    pub(crate) fn eval(&mut self, expression: &str) -> Value {
        let page = self.page.clone();
        self.eval_in(&page, None, expression)
    }

    /// Evaluates in `session`, in execution context `context` (the frame's main world when
    /// `None`); an exception is returned as `{"exception": text}`.
    pub(crate) fn eval_in(&mut self, session: &str, context: Option<i64>, expression: &str) -> Value {
        let mut params = json!({"expression": expression, "awaitPromise": true, "returnByValue": true});
        if let Some(c) = context {
            params["contextId"] = json!(c);
        }
        // A context that is gone (a frame that navigated) is an exception for the waits to see.
        let r = match self.try_send(Some(session), "Runtime.evaluate", params) {
            Ok(r) => r,
            Err(e) => return json!({"exception": e["message"].as_str().unwrap_or("evaluate failed")}),
        };
        if let Some(e) = r.get("exceptionDetails") {
            return json!({"exception": e["exception"]["description"].as_str().unwrap_or(&e.to_string())});
        }
        r["result"]["value"].clone()
    }

    /// Evaluates `expression` in the page until it is truthy (returning that value).
    pub(crate) fn wait_for(&mut self, what: &str, expression: &str) -> Value {
        let deadline = Instant::now() + STEP;
        loop {
            let v = self.eval(expression);
            if truthy(&v) {
                return v;
            }
            assert!(Instant::now() < deadline, "waited {STEP:?} for {what}; last: {v}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Navigates the page to `url` and waits for it to load.
    pub(crate) fn open(&mut self, url: &str) {
        let page = self.page.clone();
        self.send(Some(&page), "Page.navigate", json!({"url": url}));
        self.wait_for("the page to load", "document.readyState === 'complete' && location.href !== 'about:blank'");
    }

    /// The CDP session of the view's frame inside the MCP Apps sandbox (an out-of-process
    /// frame on its own site; the view is in it or, as Chromium isolates sandboxed frames, in
    /// a process of its own below it), with `Runtime` enabled, and the execution context of the
    /// view in which `ready` is truthy. Contexts that go away (a frame's first, blank document)
    /// are passed over.
    pub(crate) fn app_frame(&mut self, what: &str, ready: &str) -> (String, i64) {
        let deadline = Instant::now() + STEP;
        let mut sandbox: Option<String> = None;
        let mut sessions: std::collections::HashSet<String> = Default::default();
        let mut candidates: Vec<(String, i64)> = Vec::new();
        loop {
            self.pump();
            while let Some(e) = self.events.pop_front() {
                if std::env::var_os("MCP_CDP_DEBUG").is_some() {
                    eprintln!("cdp event: {}", e.to_string().chars().take(400).collect::<String>());
                }
                match e["method"].as_str() {
                    // Attached before their navigation commits (with an empty URL): the app
                    // frames are the page's only frames on another site.
                    Some("Target.attachedToTarget") if e["params"]["targetInfo"]["type"] == "iframe" => {
                        let info = &e["params"]["targetInfo"];
                        let s = e["params"]["sessionId"].as_str().unwrap().to_owned();
                        let frame = info["targetId"].as_str().unwrap().to_owned();
                        let child_of_sandbox = sandbox.as_deref().is_some_and(|sb| info["parentFrameId"] == json!(sb));
                        if !child_of_sandbox {
                            sandbox = Some(frame);
                        }
                        sessions.insert(s.clone());
                        self.send(Some(&s), "Runtime.enable", json!({}));
                        let auto = json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true});
                        self.send(Some(&s), "Target.setAutoAttach", auto);
                    }
                    Some("Runtime.executionContextCreated") => {
                        let Some(session) = e["sessionId"].as_str().filter(|s| sessions.contains(*s)) else { continue };
                        let ctx = &e["params"]["context"];
                        let aux = &ctx["auxData"];
                        if aux["isDefault"] == json!(true) && aux["frameId"].as_str() != sandbox.as_deref() {
                            candidates.push((session.to_owned(), ctx["id"].as_i64().unwrap()));
                        }
                    }
                    _ => {}
                }
            }
            // Newest first; drop the ones that are gone.
            let mut i = candidates.len();
            while i > 0 {
                i -= 1;
                let (session, ctx) = candidates[i].clone();
                let v = self.eval_in(&session, Some(ctx), ready);
                if truthy(&v) {
                    return (session, ctx);
                }
                if v["exception"].as_str().is_some_and(|m| m.contains("Cannot find context")) {
                    candidates.remove(i);
                }
            }
            assert!(Instant::now() < deadline, "no app frame ({what}) within {STEP:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Evaluates in the view's frame until it is truthy.
    pub(crate) fn wait_in(&mut self, session: &str, context: i64, what: &str, expression: &str) -> Value {
        let deadline = Instant::now() + STEP;
        loop {
            let v = self.eval_in(session, Some(context), expression);
            if truthy(&v) {
                return v;
            }
            assert!(Instant::now() < deadline, "waited {STEP:?} in the view for {what}; last: {v}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A PNG screenshot of the page.
    pub(crate) fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine as _;
        let page = self.page.clone();
        let r =
            self.send(Some(&page), "Page.captureScreenshot", json!({"format": "png", "captureBeyondViewport": false}));
        base64::engine::general_purpose::STANDARD.decode(r["data"].as_str().unwrap_or_default()).unwrap_or_default()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a waited-for value is there: not null, false, "" or an exception.
fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false)) && v != "" && v.get("exception").is_none()
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(Instant::now().elapsed().as_nanos() as u64);
    h.finish()
}
