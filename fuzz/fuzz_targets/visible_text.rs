//! Fuzz target `visible_text`: the body and its properties are `sluice_fuzz::visible_text`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::visible_text(data));
