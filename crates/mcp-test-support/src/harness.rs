//! A small test runner for test binaries with `harness = false`: those that are also the
//! server they test, started again as a child process ([`crate::child`]). Runs each async test
//! on a fresh multi-threaded runtime, prints `test NAME ... ok`/`FAILED` as libtest does, takes
//! a name filter (the first argument that is not a flag) and `--list`, and exits 1 when a test
//! failed.

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;

/// One test's future.
pub type TestFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A named async test.
pub type Test = (&'static str, fn() -> TestFuture);

/// Lists async test functions for [`run`]: `tests![module::name, other]`.
#[macro_export]
macro_rules! tests {
    ($($path:path),* $(,)?) => {
        &[$((stringify!($path), (|| Box::pin($path()) as $crate::harness::TestFuture) as fn() -> $crate::harness::TestFuture)),*]
    };
}

/// Runs `tests` (filtered by the command line) and reports as libtest does.
pub fn run(tests: &[Test]) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = args.iter().find(|a| !a.starts_with('-')).cloned();
    let chosen: Vec<&Test> =
        tests.iter().filter(|(name, _)| filter.as_deref().is_none_or(|f| name.contains(f))).collect();
    if args.iter().any(|a| a == "--list") {
        for (name, _) in &chosen {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    println!("\nrunning {} tests", chosen.len());
    let mut failed = Vec::new();
    for (name, test) in &chosen {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(test())));
        rt.shutdown_timeout(std::time::Duration::from_secs(1));
        match outcome {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed.push(*name);
            }
        }
    }
    let passed = chosen.len() - failed.len();
    if failed.is_empty() {
        println!("\ntest result: ok. {passed} passed; 0 failed\n");
        ExitCode::SUCCESS
    } else {
        println!("\nfailures:\n    {}\n", failed.join("\n    "));
        println!("test result: FAILED. {passed} passed; {} failed\n", failed.len());
        ExitCode::FAILURE
    }
}
