//! cargo-fuzz target `sse`: see [`streamwire_fuzz::sse`] for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| streamwire_fuzz::sse(data));
