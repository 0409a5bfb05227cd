//! Fuzz target `ansi_strip`: the body and its properties are `sluice_fuzz::ansi_strip`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::ansi_strip(data));
