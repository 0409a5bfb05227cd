//! Fuzz target `image_decode`: the body and its properties are `sluice_fuzz::image_decode`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| sluice_fuzz::image_decode(data));
