//! Memory held by a `ToolSet` of 10,000 tools (definitions cached, index built), counted
//! by a global allocator that tracks live bytes. Prints bytes in total and per tool.
//!
//! `cargo bench -p agent-benches --bench memory`

// A counting allocator needs `unsafe impl GlobalAlloc`; nothing else here is unsafe.
#![allow(unsafe_code)]

use agent_benches::noop_set;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is
// updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's layout is passed through.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    const TOOLS: usize = 10_000;
    // Each tool owns its name, and the set a copy of it as its index key: both count.
    let before = LIVE.load(Ordering::Relaxed);
    let set = noop_set(TOOLS);
    let after = LIVE.load(Ordering::Relaxed);
    let bytes = after - before;
    println!(
        "memory/toolset_{TOOLS}: {bytes} bytes live, {} bytes per tool ({} tools)",
        bytes / TOOLS as isize,
        set.len()
    );
}
