//! libfabric loads external providers named `lib<name>-fi.so` from the directories in
//! `FI_PROVIDER_PATH`; Cargo names this cdylib `libicnvia_fi.so` (no hyphens in crate
//! names). So the build links `target/<profile>/ofi/libicnvia-fi.so` to it:
//! `FI_PROVIDER_PATH=target/release/ofi` loads it.
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    // OUT_DIR = target/<profile>/build/<pkg>-<hash>/out
    let Some(profile_dir) = out.ancestors().nth(3) else {
        return;
    };
    let dir = profile_dir.join("ofi");
    let link = dir.join("libicnvia-fi.so");
    if std::fs::create_dir_all(&dir).is_err() {
        println!("cargo:warning=cannot create {}", dir.display());
        return;
    }
    let _ = std::fs::remove_file(&link);
    if let Err(e) = std::os::unix::fs::symlink("../libicnvia_fi.so", &link) {
        println!("cargo:warning=cannot link {}: {e}", link.display());
    }
}
