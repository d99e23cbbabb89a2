//! cargo-fuzz target `eventstream_repaired`: see [`streamwire_fuzz::eventstream_repaired`] for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| streamwire_fuzz::eventstream_repaired(data));
