//! Fuzz target `config_edit`: the body and its properties are `sluice_fuzz::config_edit`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::config_edit(data));
