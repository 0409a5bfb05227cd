//! Fuzz target `patch`: the body and its properties are `sluice_fuzz::patch`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::patch(data));
