use mcp::prelude::*;

#[schema]
struct A {
    a: i64,
}

/// `Args` reads the arguments, so it goes last.
#[tool]
async fn early(Args(a): Args<A>, ctx: Context) -> String {
    format!("{} {}", a.a, ctx.method())
}

fn main() {}
