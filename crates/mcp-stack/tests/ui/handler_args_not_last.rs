use mcp::prelude::*;

#[schema]
struct A {
    a: i64,
}

/// Without the macro, the types refuse an `Args` before another parameter.
fn main() {
    let _ = Tool::new("t").handler(|Args(a): Args<A>, _ctx: Context| async move { a.a.to_string() });
}
