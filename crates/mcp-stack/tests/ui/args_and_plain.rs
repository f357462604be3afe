use mcp::prelude::*;

#[schema]
struct A {
    a: i64,
}

/// A plain argument beside `Args<T>`: both would read the arguments.
#[tool]
async fn mixed(n: i64, Args(a): Args<A>) -> String {
    format!("{n} {}", a.a)
}

fn main() {}
