//! The two functions of glibc's libm that the `mcp` binary calls (`log`, from OpenTelemetry's
//! exponential histograms; `pow`, from tokio's scheduler and the CLI's progress bars), defined
//! here so that the static linker resolves them in the binary and drops `libm.so.6`, which
//! otherwise loads for these two alone: with `BIND_NOW` its symbol tables and IFUNC resolvers
//! fault in about 0.6 MiB of file pages at start (idle RSS 5.2 -> 4.6 MiB). The definitions are
//! the `libm` crate's (musl's algorithms, within 1 ulp).
//!
//! A binary opts in by linking this crate (`mcp_malloc::tune_allocator` is enough); other
//! programs keep glibc's.

/// Natural logarithm (C `log`).
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn log(x: f64) -> f64 {
    libm::log(x)
}

/// `x` raised to `y` (C `pow`).
#[allow(unsafe_code)]
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

#[cfg(test)]
mod tests {
    /// Against known values (not `f64::ln`/`powf`: in this test binary they call these).
    #[test]
    fn known_values() {
        let close = |a: f64, b: f64| (a - b).abs() <= b.abs() * 4.0 * f64::EPSILON;
        for (x, want) in [
            (1.0, 0.0),
            (std::f64::consts::E, 1.0),
            (10.0, std::f64::consts::LN_10),
            (2.0, std::f64::consts::LN_2),
            (1e300, 690.775_527_898_213_7),
            (1e-300, -690.775_527_898_213_7),
        ] {
            assert!(close(super::log(x), want), "log {x} = {}", super::log(x));
        }
        assert!(super::log(0.0) == f64::NEG_INFINITY && super::log(-1.0).is_nan());
        for (x, y, want) in
            [(2.0, 10.0, 1024.0), (0.8, 0.5, 0.894_427_190_999_915_9), (10.0, -3.0, 1e-3), (0.0, 0.0, 1.0)]
        {
            assert!(close(super::pow(x, y), want), "pow {x} {y} = {}", super::pow(x, y));
        }
    }
}
