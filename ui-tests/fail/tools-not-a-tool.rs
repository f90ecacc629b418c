use agent_core::tools;

struct NotATool;

fn main() {
    let _ = tools![NotATool];
}
