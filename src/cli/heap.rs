//! The import's heap in transparent huge pages: an import builds tens of megabytes of small
//! values (rows, records, the declaration and the ledger as parsed), and faulting that memory
//! in a 4 KB page at a time was a fifth of a 1,000-trial Harbor import's CPU time
//! (`docs/benchmarks.md`, 2026-12-05, second session). See [`huge_pages_for_the_heap`].

/// Grow the heap glibc serves small allocations from by `reserve` bytes at once and ask the
/// kernel to back the new range with transparent huge pages (`madvise(MADV_HUGEPAGE)`), so
/// that what the command allocates next is faulted in 2 MB at a time: what glibc's
/// `glibc.malloc.hugetlb=1` tunable does, which only the environment can set before the
/// process starts. Only address space is reserved: a page is still given memory when first
/// written, and the process's resident size grows by at most a huge page's rounding.
///
/// It does nothing where it cannot: not glibc on Linux, a heap that does not grow by `brk`
/// (glibc then maps memory instead, and the break does not move), or a kernel built without
/// huge pages (`madvise` fails); where they are switched off, the advice changes nothing. Call
/// it from the main thread before the allocations it is for; glibc's `M_TOP_PAD` stays at
/// `reserve`, so later growth of the heap also comes in steps of `reserve` (address space, not
/// memory). Returns the range advised.
pub fn huge_pages_for_the_heap(reserve: usize) -> Option<std::ops::Range<usize>> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: mallopt sets a tunable of glibc's allocator; sbrk(0) only reads the current
    // break; the blocks are malloc's own, freed at once; madvise(MADV_HUGEPAGE) changes no
    // contents, only how untouched pages of the range will be backed, and the range lies
    // between the break before and after the heap grew, all of it the heap's own mapping.
    unsafe {
        const HUGE: usize = 2 << 20;
        // Blocks under the mmap threshold (`src/main.rs`: 32 KB), so the heap serves them.
        const BLOCK: usize = 30 * 1024;
        libc::mallopt(libc::M_TOP_PAD, i32::try_from(reserve).unwrap_or(i32::MAX));
        let start = libc::sbrk(0) as usize;
        // Take blocks until the heap must grow (by the block and `reserve`): at most what was
        // left at its top, a few hundred KB when a command starts.
        let mut blocks = Vec::with_capacity(64);
        while libc::sbrk(0) as usize == start && blocks.len() < 64 {
            let p = libc::malloc(BLOCK);
            if p.is_null() {
                break;
            }
            blocks.push(p);
        }
        for p in blocks.into_iter().rev() {
            libc::free(p);
        }
        let end = libc::sbrk(0) as usize;
        let from = start.checked_add(HUGE - 1)? & !(HUGE - 1);
        if end <= from || start == usize::MAX {
            return None;
        }
        (libc::madvise(from as *mut libc::c_void, end - from, libc::MADV_HUGEPAGE) == 0)
            .then_some(from..end)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = reserve;
        None
    }
}
