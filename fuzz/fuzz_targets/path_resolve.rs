//! Fuzz target `path_resolve`: the body and its properties are `sluice_fuzz::path_resolve`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::path_resolve(data));
