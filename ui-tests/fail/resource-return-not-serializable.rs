use toolwright_mcp::resource;

struct Settings {
    debug: bool,
}

/// The app's settings.
#[resource(uri = "config://app")]
async fn settings() -> Settings {
    Settings { debug: false }
}

fn main() {
    let _ = Settings { debug: true }.debug;
}
