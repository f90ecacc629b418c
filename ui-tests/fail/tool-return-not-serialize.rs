use toolwright_core::tool;

struct Report {
    lines: usize,
}

/// Build a report.
#[tool]
async fn report() -> Report {
    Report { lines: 1 }
}

fn main() {
    let _ = Report { lines: 1 }.lines;
}
