//! Fuzz target `command_classifier`: the body and its properties are `sluice_fuzz::command_classifier`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::command_classifier(data));
