use toolwright_core::tool;

/// Add seventeen numbers.
#[tool]
async fn add_many(
    p0: u8,
    p1: u8,
    p2: u8,
    p3: u8,
    p4: u8,
    p5: u8,
    p6: u8,
    p7: u8,
    p8: u8,
    p9: u8,
    p10: u8,
    p11: u8,
    p12: u8,
    p13: u8,
    p14: u8,
    p15: u8,
    p16: u8,
) -> u32 {
    u32::from(p0) + u32::from(p1) + u32::from(p2) + u32::from(p3) + u32::from(p4) + u32::from(p5) + u32::from(p6) + u32::from(p7) + u32::from(p8) + u32::from(p9) + u32::from(p10) + u32::from(p11) + u32::from(p12) + u32::from(p13) + u32::from(p14) + u32::from(p15) + u32::from(p16)
}

fn main() {}
