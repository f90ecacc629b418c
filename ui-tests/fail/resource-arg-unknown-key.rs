use toolwright_mcp::resource;

fn cities(_typed: &str) -> Vec<String> {
    Vec::new()
}

/// Today's weather.
#[resource(template = "weather://{city}/today")]
async fn today(#[arg(completion = cities)] city: String) -> String {
    city
}

fn main() {}
