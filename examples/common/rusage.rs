//! CPU time from `getrusage`, to the microsecond (`/usr/bin/time` rounds to 10 ms, a third of
//! what a Harbor import of 1,000 trials is to take): one place for the benchmarks' one call.

use std::time::Duration;

/// (user, system) CPU time of `who`: `libc::RUSAGE_SELF` (this process, from exec) or
/// `libc::RUSAGE_CHILDREN` (every child this process has waited for).
#[allow(unsafe_code)]
pub fn cpu(who: libc::c_int) -> (Duration, Duration) {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::getrusage(who, &mut u) } == 0;
    assert!(ok, "getrusage({who})");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(u.ru_utime), tv(u.ru_stime))
}
