//! cargo-fuzz target `shape`: see [`streamwire_fuzz::shape`] for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| streamwire_fuzz::shape(data));
