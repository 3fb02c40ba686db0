fn main() {
    let b = bindgen::Builder::default()
        .header("wrapper.h")
        .allowlist_type("fi_.*|fid_.*|fid|fi_provider")
        .allowlist_var("FI_.*")
        .allowlist_function("fi_dupinfo|fi_freeinfo|fi_allocinfo|fi_strerror|fi_version|fi_tostr|fi_getinfo|fi_log_enabled|fi_log")
        .derive_default(true)
        .layout_tests(true)
        .generate_comments(false)
        .prepend_enum_name(false)
        .generate_inline_functions(false)
        .generate().expect("gen");
    b.write_to_file("bindings.rs").unwrap();
}
