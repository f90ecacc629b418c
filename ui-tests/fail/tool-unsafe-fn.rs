use toolwright_core::tool;

/// Read raw memory.
#[tool]
async unsafe fn peek(address: u64) -> u64 {
    address
}

fn main() {}
