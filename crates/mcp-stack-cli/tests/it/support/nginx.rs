//! A real nginx as the reverse proxy in front of one server, configured as the usual
//! deployment is: `X-Forwarded-For` set with `$proxy_add_x_forwarded_for` (whatever the client
//! sent, then the address nginx saw). Without nginx the test fails naming its package
//! (`mcp_cluster::needs`), or skips loudly under `MCP_TEST_SKIP_MISSING=1`.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nginx; killed (and its folder removed) on drop.
pub(crate) struct Nginx {
    child: Child,
    dir: PathBuf,
    /// Where nginx listens (127.0.0.1).
    pub(crate) addr: SocketAddr,
}

impl Nginx {
    /// nginx on a free loopback port, proxying everything to `upstream`; `None` when nginx is
    /// missing and the test is to be skipped.
    pub(crate) fn in_front_of(upstream: SocketAddr) -> Option<Self> {
        if !mcp_cluster::needs::program("nginx", "nginx-light") {
            return None;
        }
        let program = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .unwrap_or_else(|| "nginx".into());
        let dir = std::env::temp_dir().join(format!("mcp-nginx-{}-{}", std::process::id(), upstream.port()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let d = dir.display();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\nerror_log {d}/error.log warn;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
             server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass http://{upstream};\n      \
             proxy_http_version 1.1;\n      proxy_set_header Host $http_host;\n      \
             proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n      proxy_buffering off;\n    }}\n  }}\n}}\n"
        );
        let path = dir.join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        let mut child = Command::new(program)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(&path)
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "nginx exited ({status}): {}",
                    std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
                );
            }
            assert!(Instant::now() < deadline, "nginx did not listen on {addr} within 20 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Self { child, dir, addr })
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
