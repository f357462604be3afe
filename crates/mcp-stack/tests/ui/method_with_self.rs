use mcp::prelude::*;

struct Service;

impl Service {
    /// A method.
    #[tool]
    async fn echo(&self, text: String) -> String {
        text
    }
}

fn main() {}
