#!/usr/bin/env python3
"""Fairness under a flood: a victim calls `echo` from 127.0.0.2 while a flooder (mcp-load, 16
connections from 127.0.0.1) hammers the same server, whose per-caller limit refuses most of the
flood. Prints the victim's latency quantiles and refusals, with and without the flood.
Usage: scripts/flood-fairness.py target/release/mcp target/release/mcp-load
Loopback only (127.0.0.1 and 127.0.0.2); the flood lasts 20 s at most, the victim 400 calls."""
import json, socket, subprocess, sys, time, re

mcp, load = sys.argv[1], sys.argv[2]

def start():
    p = subprocess.Popen(["taskset", "-c", "0", mcp, "serve", "everything", "--http", "127.0.0.1:0",
                          "--rate-limit", "2000/s"], stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
        if m:
            return p, int(m.group(1))
    raise SystemExit("server did not start")

def call(port, i):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo",
        "arguments": {"text": "v"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    head = (f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
            f"accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n"
            f"mcp-method: tools/call\r\nmcp-name: echo\r\nconnection: close\r\ncontent-length: {len(body)}\r\n\r\n").encode()
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    t = time.perf_counter()
    s.connect(("127.0.0.1", port))
    s.sendall(head + body)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return (time.perf_counter() - t) * 1000, data.split(b" ", 2)[1]

def victim(port, n=400):
    lat, bad = [], 0
    for i in range(n):
        ms, status = call(port, i)
        lat.append(ms)
        bad += status != b"200"
        time.sleep(0.005)
    lat.sort()
    q = lambda f: lat[int((len(lat) - 1) * f)]
    return f"p50 {q(0.5):.2f} ms, p90 {q(0.9):.2f} ms, p99 {q(0.99):.2f} ms, refused {bad}/{n}"

p, port = start()
print("victim alone:      ", victim(port))
flood = subprocess.Popen(["taskset", "-c", "1", load, "http", "--url", f"http://127.0.0.1:{port}/mcp",
                          "--connections", "16", "--duration", "20s", "--warmup", "1s", "--json",
                          ], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(2)
print("victim under flood:", victim(port))
flood.terminate()
flood.communicate()
p.terminate()
