use toolwright_core::tool;

/// Add two numbers.
#[tool(name = "a_name_that_goes_on_and_on_well_past_the_sixty_four_characters_providers_accept")]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}
