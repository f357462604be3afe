//! `mcp-ceiling-stdio`: the throughput ceiling for the MCP stdio transport.
//!
//! Plain serde NDJSON echo: reads one line at a time from stdin, parses it into a
//! `serde_json::Value`, and writes the JSON-RPC response shape the MCP server gives for the
//! `echo` tool (`{"jsonrpc":"2.0","id":<id>,"result":{"content":[{"type":"text","text":<text>}],"resultType":"complete"}}`)
//! as one line to stdout (and `server/discover` and `tools/list` as a client needs them, see
//! [`mcp_bench::ceiling_response`]). Requests are handled one by one on one thread; output is
//! buffered and flushed whenever no more input is immediately available (the read buffer is
//! empty), so a pipelining client gets one write per batch. Exits at end of input.

use mcp_bench::ceiling_response;
use std::io::{BufRead, BufReader, BufWriter, Write};

fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    let mut input = BufReader::with_capacity(64 * 1024, stdin);
    let mut output = BufWriter::with_capacity(64 * 1024, stdout);
    let mut line = Vec::with_capacity(4096);
    // Bounded by the input: ends at end of file.
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let text = line.trim_ascii();
        if !text.is_empty() {
            let resp = match serde_json::from_slice::<serde_json::Value>(text) {
                Ok(v) => ceiling_response(v),
                Err(e) => serde_json::json!({
                    "jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": e.to_string()}
                }),
            };
            serde_json::to_writer(&mut output, &resp).map_err(std::io::Error::other)?;
            output.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}
