//! Fuzz target `redact_stream`: the body and its properties are `sluice_fuzz::redact_stream`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::redact_stream(data));
