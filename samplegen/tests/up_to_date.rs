//! The committed samples are exactly what the generator writes today (it is deterministic).

#[test]
fn committed_samples_are_up_to_date() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rocescope-samplegen"))
        .arg("--check")
        .arg(&dir)
        .output()
        .expect("run the generator");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
