use mcp::prelude::*;

fn main() {
    let _ = Tool::new("x").descripton("typo");
}
