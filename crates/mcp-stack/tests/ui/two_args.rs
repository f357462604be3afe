use mcp::prelude::*;

#[schema]
struct A {
    a: i64,
}

#[schema]
struct B {
    b: i64,
}

/// The second `Args` would get nothing: refused.
#[tool]
async fn both(Args(a): Args<A>, Args(b): Args<B>) -> String {
    format!("{} {}", a.a, b.b)
}

fn main() {}
