//! Peak resident memory of this process, from Linux's `/proc/self/status` (`VmHWM`), with a
//! reset through `/proc/self/clear_refs`, and the memory available to new processes
//! (`/proc/meminfo`). Elsewhere these are no-ops and report nothing.

/// Resets the peak to the current resident size (best effort).
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident bytes since start or the last [`reset_peak`], if the platform says.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Memory the system can give new processes without swapping (`MemAvailable`), if it says.
pub fn available_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
