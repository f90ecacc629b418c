//! trybuild runner: every file in `fail/` must fail to compile with the `.stderr` beside
//! it, every file in `pass/` must compile and run. Refresh snapshots with
//! `TRYBUILD=overwrite cargo test -p agent-ui-tests`, then review every diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("fail/*.rs");
    t.pass("pass/*.rs");
}
