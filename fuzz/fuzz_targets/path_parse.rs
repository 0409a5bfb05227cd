//! Fuzz target `path_parse`: the body and its properties are `sluice_fuzz::path_parse`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::path_parse(data));
