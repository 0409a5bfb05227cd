//! Fuzz target `tool_arguments`: the body and its properties are `sluice_fuzz::tool_arguments`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::tool_arguments(data));
