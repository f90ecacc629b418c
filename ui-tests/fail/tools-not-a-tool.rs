use toolwright_core::tools;

struct NotATool;

fn main() {
    let _ = tools![NotATool];
}
