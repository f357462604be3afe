//! A test harness for many instances behind a load balancer, with real components only: a
//! `redis-server`, N instances of `mcp serve everything --http .. --redis ..
//! --state-secret-file ..`, and nginx in front as a plain round-robin proxy (no stickiness,
//! `proxy_buffering off`, `proxy_set_header Host $http_host`). Everything listens on
//! 127.0.0.1 ports picked at random, lives in a temporary folder and is killed on drop.
//!
//! nginx passes a request on to the next instance when one refuses the connection
//! (`proxy_next_upstream error timeout non_idempotent`), but not one whose request it has
//! started sending (`proxy_request_buffering off`): an instance must not close a kept-alive
//! connection under a request, which the drain of `mcp serve` guarantees (docs/deploy.md). So
//! instances can be restarted one after another ([`Cluster::stop_instance`],
//! [`Cluster::start_instance`]) without a client seeing a failure.
//!
//! Used by the integration tests (`mcp-cli/tests/cluster.rs`) and, through the `mcp-cluster`
//! binary, by CI to run the conformance suite through the proxy.

pub mod needs;

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What to start.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// The `mcp` binary.
    pub mcp: PathBuf,
    /// How many instances (default 3).
    pub instances: usize,
    /// Extra arguments for every instance's `mcp serve everything`.
    pub extra_args: Vec<String>,
}

impl ClusterOptions {
    /// `instances` instances of the `mcp` binary at `mcp`.
    pub fn new(mcp: impl Into<PathBuf>, instances: usize) -> Self {
        Self { mcp: mcp.into(), instances, extra_args: Vec::new() }
    }
}

/// A `redis-server` on a free 127.0.0.1 port (no persistence), killed on drop.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
    owns_dir: bool,
}

impl RedisServer {
    /// Starts one in a temporary folder of its own.
    pub fn start() -> io::Result<Self> {
        let dir = temp_dir("redis")?;
        let mut r = Self { port: free_port()?, dir, child: None, owns_dir: true };
        r.restart()?;
        Ok(r)
    }

    fn in_dir(dir: &Path) -> io::Result<Self> {
        let mut r = Self { port: free_port()?, dir: dir.to_owned(), child: None, owns_dir: false };
        r.restart()?;
        Ok(r)
    }

    /// Its URL (`redis://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Starts it again on the same port (after [`RedisServer::kill`]); empty, as nothing is saved.
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        let program = find("redis-server").ok_or_else(|| io::Error::other("redis-server is not installed"))?;
        let log = self.dir.join("redis.log");
        let mut child = Command::new(program)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log)?)
            .stderr(Stdio::null())
            .spawn()?;
        wait_ready(self.port, &mut child, "redis-server", &log)?;
        self.child = Some(child);
        Ok(())
    }

    /// Kills it (SIGKILL: every connection drops).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        if self.owns_dir && std::env::var_os("MCP_CLUSTER_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn temp_dir(what: &str) -> io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("mcp-{what}-{}-{:08x}", std::process::id(), rand::random::<u32>()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// One running instance.
#[derive(Debug)]
struct Instance {
    port: u16,
    child: Option<Child>,
}

/// The running cluster (see the crate docs); everything stops on drop.
#[derive(Debug)]
pub struct Cluster {
    options: ClusterOptions,
    dir: PathBuf,
    redis: Option<RedisServer>,
    instances: Vec<Instance>,
    proxy_port: u16,
    nginx: Option<Child>,
}

/// Where a program is: on `PATH`, or in the sbin folders Debian puts nginx in.
fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/local/sbin".into(), "/sbin".into()])
        .map(|d: PathBuf| d.join(program))
        .find(|p| p.is_file())
}

/// A free loopback port (bound and released; the race with other processes is harmless here).
fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Waits until `port` accepts connections or `child` exits.
fn wait_ready(port: u16, child: &mut Child, what: &str, log: &Path) -> io::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            return Err(io::Error::other(format!("{what} exited ({status}) before listening:\n{log}")));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(io::Error::other(format!("{what} did not listen on port {port} within 20 s")))
}

impl Cluster {
    /// Whether `redis-server` and `nginx` are installed (`Err` names what is missing and how to
    /// install it).
    pub fn available() -> Result<(), String> {
        let missing: Vec<&str> = ["redis-server", "nginx"].into_iter().filter(|p| find(p).is_none()).collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(format!("{} not installed (apt-get install -y redis-server nginx-light)", missing.join(" and ")))
    }

    /// Starts Redis, the instances and nginx, and waits until each one listens.
    pub fn start(options: ClusterOptions) -> io::Result<Self> {
        Self::available().map_err(io::Error::other)?;
        let dir =
            std::env::temp_dir().join(format!("mcp-cluster-{}-{:08x}", std::process::id(), rand::random::<u32>()));
        std::fs::create_dir_all(&dir)?;
        use base64::Engine as _;
        let secret = base64::engine::general_purpose::STANDARD.encode(rand::random::<[u8; 32]>());
        std::fs::write(dir.join("state-secrets"), format!("{secret}\n"))?;
        let mut cluster = Self {
            instances: Vec::new(),
            proxy_port: free_port()?,
            redis: Some(RedisServer::in_dir(&dir)?),
            nginx: None,
            dir,
            options,
        };
        for _ in 0..cluster.options.instances {
            let port = free_port()?;
            cluster.instances.push(Instance { port, child: None });
        }
        for i in 0..cluster.instances.len() {
            cluster.start_instance(i)?;
        }
        cluster.start_nginx()?;
        Ok(cluster)
    }

    /// The proxy's MCP endpoint (`http://127.0.0.1:PORT/mcp`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.proxy_port)
    }

    /// Instance `i`'s own MCP endpoint (bypassing the proxy).
    pub fn instance_url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}/mcp", self.instances[i].port)
    }

    /// The proxy's address.
    pub fn proxy_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.proxy_port))
    }

    /// Instance `i`'s address.
    pub fn instance_addr(&self, i: usize) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.instances[i].port))
    }

    /// How many instances there are.
    pub fn len(&self) -> usize {
        self.instances.len()
    }

    /// Whether there is no instance.
    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    /// The Redis URL the instances share.
    pub fn redis_url(&self) -> String {
        self.redis.as_ref().expect("redis").url()
    }

    /// The folder holding the logs and the generated configuration.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts `redis-server` again on the same port, empty (after [`Cluster::kill_redis`]).
    pub fn start_redis(&mut self) -> io::Result<()> {
        self.redis.as_mut().expect("redis").restart()
    }

    /// Kills `redis-server` (SIGKILL: every connection drops, nothing is saved).
    pub fn kill_redis(&mut self) {
        if let Some(r) = self.redis.as_mut() {
            r.kill();
        }
    }

    /// Starts (or restarts, on the same port) instance `i`.
    pub fn start_instance(&mut self, i: usize) -> io::Result<()> {
        let port = self.instances[i].port;
        let log = self.dir.join(format!("instance-{i}.log"));
        let mut child = Command::new(&self.options.mcp)
            .args(["serve", "everything", "--http", &format!("127.0.0.1:{port}"), "--redis", &self.redis_url()])
            .arg("--state-secret-file")
            .arg(self.dir.join("state-secrets"))
            .args(&self.options.extra_args)
            .env_remove("MCP_REDIS_URL")
            .env_remove("MCP_STATE_SECRETS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()?;
        wait_ready(port, &mut child, &format!("instance {i}"), &log)?;
        self.instances[i].child = Some(child);
        Ok(())
    }

    /// Kills instance `i` with SIGKILL (no graceful shutdown: its leases simply lapse).
    pub fn kill_instance(&mut self, i: usize) {
        if let Some(mut c) = self.instances[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops instance `i` as an operator does (SIGTERM: it refuses new connections, finishes the
    /// requests in flight within its drain time, then exits) and waits for it to exit, at most
    /// `limit` (then it is killed and the wait is an error). Returns its exit status.
    #[cfg(unix)]
    pub fn stop_instance(&mut self, i: usize, limit: Duration) -> io::Result<std::process::ExitStatus> {
        let Some(mut child) = self.instances[i].child.take() else {
            return Err(io::Error::other(format!("instance {i} is not running")));
        };
        let sent = Command::new("kill").args(["-TERM", &child.id().to_string()]).status()?;
        if !sent.success() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::other(format!("kill -TERM of instance {i} failed")));
        }
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::other(format!("instance {i} did not exit within {limit:?} of SIGTERM")));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn start_nginx(&mut self) -> io::Result<()> {
        let d = self.dir.display();
        let upstreams: String = self
            .instances
            .iter()
            .map(|i| format!("    server 127.0.0.1:{} max_fails=1 fail_timeout=2s;\n", i.port))
            .collect();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\nerror_log {d}/nginx-error.log warn;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 4096; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/nginx-body;\n  proxy_temp_path {d}/nginx-proxy;\n  \
             fastcgi_temp_path {d}/nginx-fastcgi;\n  uwsgi_temp_path {d}/nginx-uwsgi;\n  scgi_temp_path {d}/nginx-scgi;\n  \
             upstream mcp {{\n{upstreams}    keepalive 64;\n  }}\n  \
             server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass http://mcp;\n      \
             proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n      \
             proxy_buffering off;\n      proxy_request_buffering off;\n      proxy_read_timeout 3600s;\n      \
             proxy_send_timeout 3600s;\n      client_max_body_size 8m;\n      \
             proxy_next_upstream error timeout non_idempotent;\n    }}\n  }}\n}}\n",
            port = self.proxy_port
        );
        let path = self.dir.join("nginx.conf");
        std::fs::write(&path, conf)?;
        let log = self.dir.join("nginx-error.log");
        let mut child = Command::new(find("nginx").expect("checked"))
            .arg("-p")
            .arg(&self.dir)
            .arg("-c")
            .arg(&path)
            .arg("-e")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.dir.join("nginx-stderr.log"))?)
            .spawn()?;
        wait_ready(self.proxy_port, &mut child, "nginx", &self.dir.join("nginx-stderr.log"))?;
        self.nginx = Some(child);
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let children = self.instances.iter_mut().filter_map(|i| i.child.take());
        for mut c in children.chain(self.nginx.take()) {
            let _ = c.kill();
            let _ = c.wait();
        }
        drop(self.redis.take());
        if std::env::var_os("MCP_CLUSTER_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
