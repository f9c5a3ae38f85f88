//! What machine a record was measured on: the processor's name and family, the threads the
//! benchmark ran with and the widest vector instructions Veil's kernels use there. Timings of
//! the same code differ by more than 2× between processors (AVX-512 against AVX2), so a record
//! says which one it came from.

/// `"<model name> (family F model M), T threads, <tier>"`, from Linux's `/proc/cpuinfo` where
/// it is readable (else the architecture alone).
pub fn describe() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let cpu = match (field("model name"), field("cpu family"), field("model")) {
        (Some(name), Some(family), Some(model)) => format!("{name} (family {family} model {model})"),
        (Some(name), _, _) => name,
        _ => std::env::consts::ARCH.to_string(),
    };
    format!("{cpu}, {} threads, {}", rayon::current_num_threads(), vector_tier())
}

/// The widest vector instructions the kernels pick on this processor.
fn vector_tier() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512dq") {
            return "AVX-512";
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return "AVX2";
        }
    }
    "baseline"
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_description_names_threads_and_a_tier() {
        let d = super::describe();
        assert!(d.contains(" threads, "), "{d}");
        assert!(["AVX-512", "AVX2", "baseline"].iter().any(|t| d.ends_with(t)), "{d}");
    }
}
